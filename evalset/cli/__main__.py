from evalset.cli import main

main()
