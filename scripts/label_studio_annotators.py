"""Create evalset annotators in a Label Studio database: one user and one organization of their own each.

Run by ``scripts/label-studio.sh add-annotator`` with Label Studio's own interpreter (its virtual environment), never
with evalset's: ``python label_studio_annotators.py DATA_DIR URL EMAIL [EMAIL...]`` (URL: where this machine reaches
the data directory's server, recorded for push and pull; '' if unknown). The e-mails were checked by the
shell script. Conventions:

- Label Studio Community puts every user into the first organization (the admin's), where every member sees every
  project and every annotation. Here each annotator gets an organization of their own (created by them, titled
  ``evalset annotator <email>``) as their active organization and is a member of no other, so their projects,
  tasks and annotations are theirs alone.
- The user gets a generated password and Label Studio's legacy API token (made with the user); legacy tokens are
  enabled for the new organization. E-mail, password, token, organization id and the server's URL go to
  ``DATA_DIR/evalset-annotators.tsv`` (mode 600, a header line, one annotator a line), read by ``evalset push`` /
  ``pull --annotators``. Nothing secret is printed: stdout gets one line per e-mail (added, or already there).
- Idempotent: an e-mail already in the file and in the database is left as it is (said so). Everything is checked
  before anything is created: an e-mail in the database but not in the file (a user not made here) or in the file
  but not in the database (a reset data directory) is refused, one line on stderr, exit 2, nothing changed.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import secrets
import sys
from pathlib import Path

FILE_NAME = "evalset-annotators.tsv"
COLUMNS = ("email", "password", "token", "organization", "url")


STDERR = sys.stderr  # Django's setup below is silenced; this script's errors are not


def fail(message: str) -> None:
    print(f"label-studio.sh: error: {message}", file=STDERR)
    sys.exit(2)


def read_file(path: Path) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    if not rows or tuple(rows[0]) != COLUMNS:
        fail(f"{path}: line 1 is not the header {' '.join(COLUMNS)}")
    found = {}
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(COLUMNS):
            fail(f"{path}: line {number} has {len(row)} fields, not {len(COLUMNS)}")
        found[row[0]] = dict(zip(COLUMNS, row, strict=True))
    return found


def write_file(path: Path, rows: dict[str, dict[str, str]]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    with os.fdopen(descriptor, "w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows([row[column] for column in COLUMNS] for row in rows.values())
    os.replace(temporary, path)


def setup_django(data_dir: Path) -> None:
    import label_studio

    sys.path.insert(0, os.path.dirname(label_studio.__file__))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "core.settings.label_studio")
    os.environ["LABEL_STUDIO_BASE_DATA_DIR"] = str(data_dir)
    import django

    # Label Studio's settings talk on stdout and stderr as they load (one line even echoes the secret key): kept out
    # of sight, and shown only when the setup fails.
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            django.setup()
    except Exception:
        STDERR.write(said.getvalue())
        raise


def main(data_dir: Path, url: str, emails: list[str]) -> None:
    path = data_dir / FILE_NAME
    recorded = read_file(path)
    setup_django(data_dir)
    from django.db import transaction
    from organizations.models import Organization
    from users.models import User

    existing = {user.email: user for user in User.objects.filter(email__in=emails)}
    for email in emails:
        if email in existing and email not in recorded:
            fail(f"{email} is already a Label Studio user but not in {path} (not made by add-annotator; its "
                 "organization is not its own); nothing changed")
        if email in recorded and email not in existing:
            fail(f"{email} is in {path} but not in Label Studio's database (was {data_dir} reset?); nothing changed")
    lines = []
    for email in dict.fromkeys(emails):
        if email in existing:
            lines.append(f"unchanged {email}: already an annotator (organization {recorded[email]['organization']}); "
                         "nothing changed")
            continue
        password = secrets.token_urlsafe(12)
        with transaction.atomic():
            user = User.objects.create_user(email=email, password=password)
            user.username = email
            user.save(update_fields=["username"])
            organization = Organization.create_organization(created_by=user, title=f"evalset annotator {email}",
                                                            legacy_api_tokens_enabled=True)
            organization.jwt.legacy_api_tokens_enabled = True
            organization.jwt.save()
            user.active_organization = organization
            user.save(update_fields=["active_organization"])
        recorded[email] = {"email": email, "password": password, "token": user.auth_token.key,
                           "organization": str(organization.id), "url": url}
        write_file(path, recorded)  # after each user: the file never misses a user the database holds
        lines.append(f"added {email}: organization {organization.id} of their own")
    if path.exists():
        os.chmod(path, 0o600)
    lines.append(f"credentials in {path} (mode 600): hand each annotator their e-mail and password "
                 f"(cut -f1,2 {path})")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) < 4:
        fail("usage: label_studio_annotators.py DATA_DIR URL EMAIL [EMAIL...]")
    main(Path(sys.argv[1]), sys.argv[2], sys.argv[3:])
