"""Human judging in Label Studio: push a pool's tasks to a project, pull the submitted grades back.

The toolkit talks to the server only through ``label-studio-sdk``. Conventions:

- A project is found by its title; two projects with the same title are refused (ambiguous). Its description
  is a sentence for annotators (what to do, how many pairs, the guideline's name and version) followed by the
  record of the guideline it was made from (name, version, sha256); pushing to it with a different guideline is
  refused, so one project never mixes two scales or two sets of rules.
- A guideline whose worked examples grade a pair being pushed is refused (annotators would read the answer in
  the instructions; :func:`evalset.pooling.examples.refuse_worked_examples`).
- Skip sends a task to the project's other annotators, never back to the one who skipped it
  (``skip_queue`` ``REQUEUE_FOR_OTHERS``, set by push); with ``--overlap`` > 1 in one project, push warns that
  on Label Studio Community the annotators see each other's grades.
- The labeling config is generated from the guideline's scale: one single-choice option per grade, labelled
  ``"<grade> <name>"`` with the grade as its alias (what the export holds) and as its hotkey (for grades
  0-9), a free-text comment box, and the query and document shown with ``Text`` tags, which render the task's
  data as escaped text, never as HTML; each grade's button shows its name and definition. The guideline
  body, written as the small HTML subset Label Studio's sanitiser keeps (:mod:`evalset.labelstudio.instructions`),
  is the project's instructions, shown before the first task. Pushing to an existing project made from the same
  guideline brings its interface and instructions up to date (the grades and control names never change).
  Above the query the view shows the task's place in its project (``Pair 4 of 8``); its CSS (a ``Style`` tag)
  hides Label Studio's side panels and its own task counter and lets the top bar fit 800 px.
- A task carries ``pair_id``, ``query``, ``text`` and ``progress`` (its place, counted by the push that added
  it) only (no system, rank, stratum, query or document id).
  Tasks are imported in the pool's ``order`` and the project samples sequentially, so annotators see them in
  judging order; pairs added by a later push follow the ones already there.
- Idempotent push: the pair ids already in the project are read from the task list restricted to ``id`` and
  ``data`` (faster than a snapshot for this), and only the missing pairs are imported, in batches. A push
  interrupted by a crash is completed by pushing again: every batch is one import request, which Label Studio
  commits as a whole or not at all, and the next push sees what was committed.
- Pull reads one export snapshot and turns every submitted annotation into one labels row (docs/design.md):
  ``annotator`` is the annotator's e-mail, ``kind`` is ``human``, ``labeled_at`` the annotation's last update
  (UTC, ISO 8601), ``source`` ``label-studio:<project id>/<task id>/<annotation id>``. Skipped (cancelled)
  annotations, annotations without a grade, grades off the guideline's scale and tasks whose ``pair_id`` is
  not in the pool are counted in the report, never turned into grades. Rows are sorted by query id, doc id,
  annotator and annotation id, so pulling twice gives the same file.
- No grade lost, no silent revision. Skip on a submitted task turns its annotation into a cancelled one that
  still holds the grade: an annotation cancelled more than ``REVISION_DELAY_S`` after it was created, with a
  grade, was submitted first, so its grade is kept and the report names it (a task skipped before any
  submission is a skip). An annotation updated after its submission is counted as revised; Label Studio
  Community keeps no earlier result, so the earlier grade comes from an earlier pull's labels table
  (``previous``): the report lists each grade revised or withdrawn since (pair, annotator, old and new grade,
  times), and a freeze compares the labels with the parent version's (:mod:`evalset.judgments.revisions`).
- No grade lost to an undo: the export is read with every task's drafts. Skip then Cancel skip on a submitted
  task saves its grade as a draft and deletes the annotation; pull names every draft holding a grade (withdrawn,
  not submitted, or a change not updated: :class:`evalset.labelstudio.pull.Draft`) and never turns one into a
  label.
- Blind judging (``--annotators``, :mod:`evalset.labelstudio.blind`): one project per annotator, each on a Label
  Studio server of the annotator's own (``scripts/label-studio.sh start-team``: Label Studio Community has no
  annotator role and lets any user read any organization's grades by URL), the tasks given to ``overlap`` of
  them; pull gathers every project's grades as one labels table. Annotators who share a server are refused
  unless ``shared_server`` (then the result warns: not blind).
"""

from evalset.labelstudio.blind import (
    ANNOTATORS_VARIABLE,
    Annotator,
    BlindPushResult,
    annotator_team,
    annotator_title,
    assign_pairs,
    check_blind,
    check_unchanged,
    pull_blind,
    push_blind,
    read_annotators,
)
from evalset.labelstudio.project import (
    API_KEY_VARIABLE,
    TASK_DATA_FIELDS,
    URL_VARIABLE,
    LabelStudioError,
    connect,
    description_matches,
    description_record,
    export_snapshot,
    find_project,
    grade_of_choice,
    instructions_html,
    labeling_config,
    pair_id_counts,
    project_description,
    project_pair_ids,
    refresh_interface,
)
from evalset.labelstudio.pull import PullReport, labels_from_export, pull, write_pull
from evalset.labelstudio.push import PushResult, ensure_project, pool_tasks, push, refuse_worked_examples

__all__ = [
    "ANNOTATORS_VARIABLE",
    "API_KEY_VARIABLE",
    "TASK_DATA_FIELDS",
    "URL_VARIABLE",
    "Annotator",
    "BlindPushResult",
    "LabelStudioError",
    "PullReport",
    "PushResult",
    "annotator_team",
    "annotator_title",
    "assign_pairs",
    "check_blind",
    "check_unchanged",
    "connect",
    "description_matches",
    "description_record",
    "ensure_project",
    "export_snapshot",
    "find_project",
    "grade_of_choice",
    "instructions_html",
    "labeling_config",
    "labels_from_export",
    "pair_id_counts",
    "pool_tasks",
    "project_description",
    "project_pair_ids",
    "pull",
    "pull_blind",
    "push",
    "push_blind",
    "read_annotators",
    "refresh_interface",
    "refuse_worked_examples",
    "write_pull",
]
