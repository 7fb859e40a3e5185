"""evalset seen through another library's interface: :mod:`evalset.compat.ir_measures` makes evalset's engine an
ir_measures provider. Nothing in evalset imports this package; each module imports its library itself."""
