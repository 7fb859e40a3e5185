"""`evalset.sampling`: counting, screening, strata and sampling, checked against plain-Python counts.

The Excite log (``../shared/data/querylog/excite-small.log``, ``user<TAB>yymmddhhmmss<TAB>query``,
4,501 lines) is the real log. The expected figures below come from the plain-Python reference in this
file; the personal data in it was found by reading every query with a digit or an ``@``."""

from __future__ import annotations

import collections
import datetime as dt
import gzip
import hashlib
import re
import unicodedata

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalset.errors import InputError
from evalset.io.queries import QUERIES_COLUMNS, read_queries
from evalset.io.querylog import LogColumns, log_text_bytes, read_query_log_table
from evalset.sampling import (
    DROP_REASONS,
    LogLayout,
    Normalisation,
    Screen,
    Strata,
    Window,
    assign_strata,
    choose_engine,
    count_queries,
    count_queries_duckdb,
    has_card_number,
    luhn_valid,
    normalise_texts,
    sample_log,
    sample_queries,
    screen_queries,
    write_sample,
)
from evalset.sampling.strata import id_sort_keys, query_ids, traffic_tiers

EXCITE_COLUMNS = LogColumns(query="3", user_id="1", timestamp="2")
EXCITE_LAYOUT = LogLayout(header="no", query="3", user_id="1", timestamp="2")
# Every query of the Excite log that carries personal data, by the reason it is dropped for.
EXCITE_PII = {
    "email": {'"jlamont@washblade.com"', "jlamont@washblade.com", "web@b93.com", "jdun@scuc.edu.au",
              "tborges@inetminas.estaminas.com.br"},
    "phone": {"http://38.216.112.2521/naughty"},  # 216.112.2521 reads as a phone number
    "long_digits": {"198.316.217.831/webtalk.html", "206.9.168.11/btan/1stgrade.htm",
                    "http://158.18.1.181:80/demo/owa/men0010$.startup."},  # IP addresses
}


# ------------------------------------------------------------------------------ plain-Python reference
def plain_normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def excite_rows(path) -> list[tuple[str, str, str]]:
    with open(path, encoding="utf-8") as handle:
        return [tuple(line.rstrip("\n").split("\t")) for line in handle]


def plain_frequencies(rows, by_users: bool) -> dict[str, int]:
    """Normalised query -> submissions or distinct users, personal data and empty queries left out."""
    pii = set().union(*EXCITE_PII.values())
    users = collections.defaultdict(set)
    submissions = collections.Counter()
    for user, _, raw in rows:
        query = plain_normalise(raw)
        if query and query not in pii:
            submissions[query] += 1
            users[query].add(user)
    return {q: len(u) for q, u in users.items()} if by_users else dict(submissions)


def plain_strata(frequencies: dict[str, int], cuts=(1 / 3, 2 / 3)) -> dict[str, int]:
    """The documented boundary rule, one query at a time: tier = number of cuts at or below the traffic
    before the query, in the order frequency descending then query_id."""
    total = sum(frequencies.values())
    query_id = {q: "q" + hashlib.md5(q.encode()).hexdigest()[:16] for q in frequencies}
    order = sorted(frequencies, key=lambda q: (-frequencies[q], query_id[q]))
    tiers, before = {}, 0
    for query in order:
        tiers[query] = sum(before >= cut * total for cut in cuts)
        before += frequencies[query]
    return tiers


@pytest.fixture(scope="module")
def excite(shared_data):
    return shared_data / "querylog" / "excite-small.log"


@pytest.fixture(scope="module")
def excite_log(excite):
    return read_query_log_table(excite, EXCITE_COLUMNS, header=False)


# ----------------------------------------------------------------------------------------- Excite figures
def test_excite_counts_distinct_queries_and_drops_as_plain_python(excite, excite_log):
    counts = count_queries(excite_log)
    rows = excite_rows(excite)
    normalised = [plain_normalise(raw) for _, _, raw in rows]
    assert counts.rows_read == len(rows) == 4501
    assert counts.dropped["empty"] == sum(not q for q in normalised) == 533
    for reason, texts in EXCITE_PII.items():
        assert counts.dropped[reason] == sum(q in texts for q in normalised)
    assert (counts.dropped["email"], counts.dropped["phone"], counts.dropped["long_digits"]) == (6, 3, 7)
    assert sum(counts.dropped.values()) == 533 + 16
    assert dict(zip(counts.queries["query"], counts.queries["frequency"], strict=True)) == plain_frequencies(
        rows, by_users=False)
    assert len(counts.queries) == 2086  # 2,095 distinct lower-cased queries (data README) less 9 with PII
    assert counts.queries.loc[counts.queries["query"] == "maytag", "frequency"].item() == 41


def test_excite_strata_hold_a_third_of_traffic_each(excite, excite_log):
    summary = count_queries(excite_log).summary
    assert summary["stratum"].tolist() == ["head", "torso", "tail"]
    assert summary["distinct_queries"].tolist() == [196, 573, 1317]
    assert summary["traffic"].tolist() == [1318, 1317, 1317]  # 3,952 kept submissions
    assert summary["traffic_share"].sum() == pytest.approx(1.0)
    assert np.allclose(summary["traffic_share"], 1 / 3, atol=1 / 3952 * 2)


def test_excite_strata_follow_the_boundary_rule_query_by_query(excite, excite_log):
    counts = count_queries(excite_log)
    expected = plain_strata(plain_frequencies(excite_rows(excite), by_users=False))
    names = ("head", "torso", "tail")
    assert dict(zip(counts.queries["query"], counts.queries["stratum"], strict=True)) == {
        q: names[t] for q, t in expected.items()}


def test_counting_by_users_changes_the_strata(excite, excite_log):
    by_users = count_queries(excite_log, count_by="users")
    expected = plain_frequencies(excite_rows(excite), by_users=True)
    assert dict(zip(by_users.queries["query"], by_users.queries["frequency"], strict=True)) == expected
    maytag = by_users.queries["query"] == "maytag"
    assert by_users.queries.loc[maytag, "frequency"].item() == 1  # one user, 41 submissions
    assert by_users.summary["distinct_queries"].tolist() == [674, 706, 706]
    assert by_users.summary["traffic"].tolist() == [707, 706, 706]
    assert by_users.summary["distinct_queries"].tolist() != count_queries(excite_log).summary[
        "distinct_queries"].tolist()


def test_one_user_repeating_a_query_is_one_user():
    log = pd.DataFrame({"query": ["x"] * 40 + ["y", "y"], "user_id": ["a"] * 40 + ["a", "b"]})
    counts = count_queries(log, count_by="users")
    assert dict(zip(counts.queries["query"], counts.queries["frequency"], strict=True)) == {"x": 1, "y": 2}
    assert count_queries(log).queries.set_index("query")["frequency"].to_dict() == {"x": 40, "y": 2}


def test_count_by_users_without_a_user_column_is_refused():
    with pytest.raises(InputError, match="user column"):
        count_queries(pd.DataFrame({"query": ["a"]}), count_by="users")


# ------------------------------------------------------------------------------------------- screening
PLANTED = {
    "email": ["john.doe@example.com", "Mail ME at Jane_Roe+x@Mail.co.uk please"],
    "phone": ["+1 (555) 123-4567", "call 555-867-5309", "020 7946 0958", "+44 20 7946 0958",
              "1-800-555-0199"],
    "payment_card": ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005",
                     "card ４１１１１１１１１１１１１１１１ exp"],
    "long_digits": ["account 123456789012", "ssn 123-45-6789"],
    "credential_url": ["https://bob:hunter2@example.com/x", "http://example.com/reset?token=abc123"],
}
HARMLESS = ["windows 95 98", "top 100 2008", "beverly hills 90210", "1998 1999 2000", "iphone 15 pro",
            "4111 1111 1111 1112"]  # the last fails the Luhn check: not a card number


def test_each_kind_of_personal_data_gets_its_reason():
    texts = [t for group in PLANTED.values() for t in group] + HARMLESS
    _, reason = screen_queries(pa.array(texts))
    expected = [name for name, group in PLANTED.items() for _ in group] + [None] * len(HARMLESS)
    assert reason.to_pylist() == expected


def test_luhn_and_card_layouts():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert has_card_number("my card 4111 1111 1111 1111 123")  # trailing digits do not hide it
    assert has_card_number("3782 822463 10005")  # American Express layout
    assert not has_card_number("2024 2025 173451")  # not a card layout


def test_planted_personal_data_never_reaches_queries_tsv_and_is_counted(excite, tmp_path):
    planted = [t for group in PLANTED.values() for t in group]
    log = tmp_path / "planted.tsv"
    lines = [f"u{i}\t970916000000\t{text}" for i, text in enumerate(planted * 2)]
    log.write_text(excite.read_text(encoding="utf-8") + "\n".join(lines) + "\n", encoding="utf-8")
    everything = {"head": 196, "torso": 573, "tail": 1317}  # sample every kept query
    result = sample_log([log], everything, layout=EXCITE_LAYOUT)
    queries_path, manifest_path = write_sample(result, tmp_path / "queries.tsv")
    written = " | ".join(read_queries(queries_path)["query"])
    assert written.count(" | ") + 1 == 2086  # Excite's queries, no more
    for secret in ("4111", "hunter2", "867-5309", "7946", "example.com", "123456789", "jane_roe", "token="):
        assert secret not in written
    with open(manifest_path, encoding="utf-8") as handle:
        manifest = handle.read()
    assert not any(plain_normalise(text) in manifest or text in manifest for text in planted)
    in_excite = {"email": 6, "phone": 3, "long_digits": 7}
    dropped = result.manifest["submissions"]["dropped"]
    for reason, group in PLANTED.items():
        assert dropped[reason] == 2 * len(group) + in_excite.get(reason, 0)


def test_blocklist_and_exclusions_are_honoured(excite, tmp_path):
    blocklist = tmp_path / "blocked.txt"
    blocklist.write_text("# terms\nchat\n", encoding="utf-8")
    earlier = tmp_path / "earlier.tsv"
    earlier.write_text("query_id\tquery\nq1\tMaytag\n", encoding="utf-8")
    result = sample_log([excite], 5, layout=EXCITE_LAYOUT, blocklists=[blocklist],
                        exclusions=[earlier])
    rows = excite_rows(excite)
    normalised = [plain_normalise(raw) for _, _, raw in rows]
    dropped = result.counts.dropped
    assert dropped["excluded"] == 41
    # a whole word: "australian+chat+victoria" is blocked, "chateau" is not
    assert dropped["blocklist"] == sum("chat" in re.split(r"\W+", q) for q in normalised) == 32
    assert not result.counts.queries["query"].str.contains(r"\bchat\b").any()
    assert "maytag" not in set(result.counts.queries["query"])
    assert {"chathouse", "the park chatrooms"} <= set(result.counts.queries["query"])  # whole words only


def test_normalisation_merges_case_width_and_white_space():
    log = pd.DataFrame({"query": ["Ｈｅｌｌｏ　World", "hello  world", " HELLO\tworld ", "\u3000", ""]})
    merged = count_queries(log)
    assert merged.queries.set_index("query")["frequency"].to_dict() == {"hello world": 3}
    assert merged.dropped["empty"] == 2
    kept_apart = count_queries(log, normalisation=Normalisation.parse("none"))
    assert len(kept_apart.queries) == 3
    assert Normalisation.parse("case,space") == Normalisation(True, False, True)


def test_normalised_texts_equal_python_nfkc_lower_and_split():
    """Every white-space character str.isspace() knows, full-width and accented letters, capitals, and
    texts with and without non-ASCII characters (which take different paths)."""
    white = [chr(c) for c in range(0x3001) if chr(c).isspace()]
    alphabet = [*white, *"aZ09.-", "Ｈ", "é", "É", "ß", "ﬁ", "Ⅻ", "ǅ"]
    rng = np.random.default_rng(5)
    texts = ["".join(rng.choice(alphabet, size=rng.integers(0, 9))) for _ in range(3000)]
    texts += ["plain words", "Plain Words", " lead", "trail ", "two  spaces", "tab\there"]
    normalised = normalise_texts(pa.array(texts), Normalisation()).to_pylist()
    assert normalised == [plain_normalise(text) for text in texts]


def test_two_spaces_across_the_scanning_blocks_are_collapsed():
    """Texts are scanned for white space in blocks of 2**20 bytes; a pair of spaces may straddle two."""
    texts = ["x" * (2**20 - 1) + "  y", "a  b"]
    assert normalise_texts(pa.array(texts), Normalisation()).to_pylist() == ["x" * (2**20 - 1) + " y", "a b"]


# ---------------------------------------------------------------------------------------------- windows
def test_time_window_keeps_since_and_drops_until(excite, excite_log):
    window = Window(dt.datetime(1997, 9, 16, 6), dt.datetime(1997, 9, 16, 12), "%y%m%d%H%M%S")
    counts = count_queries(excite_log, window=window)
    stamps = [stamp for _, stamp, _ in excite_rows(excite)]
    assert counts.dropped["outside_window"] == sum(not "970916060000" <= s < "970916120000" for s in stamps)
    assert counts.rows_read == 4501 and sum(counts.dropped.values()) + int(
        counts.queries["frequency"].sum()) == 4501


def test_unparsable_timestamps_are_counted_not_hidden():
    log = pd.DataFrame({"query": ["a", "b", "c"], "timestamp": ["2026-01-02T10:00:00", "yesterday", ""]})
    counts = count_queries(log, window=Window(since=pd.Timestamp("2026-01-01").to_pydatetime()))
    assert counts.dropped["unparsable_timestamp"] == 2 and counts.rows_read == 3


# -------------------------------------------------------------------------------------- strata options
def test_custom_cut_points():
    strata = Strata.parse("head:0.5,torso:0.8,tail")
    assert strata == Strata(("head", "torso", "tail"), (0.5, 0.8))
    log = pd.DataFrame({"query": [f"q{i}" for i in range(100) for _ in range(100 - i)]})
    summary = count_queries(log, strata=strata).summary
    assert summary["traffic_share"].round(2).tolist() == pytest.approx([0.5, 0.3, 0.2], abs=0.02)
    for bad in ("head:0.8,torso:0.5,tail", "head:0.5,tail:0.9", "head:x,tail", "head:1.0,tail"):
        with pytest.raises(ValueError):
            Strata.parse(bad)


def test_equal_frequencies_on_a_cut_are_split_by_query_id():
    log = pd.DataFrame({"query": [f"query {i}" for i in range(9)]})  # nine queries seen once
    counts = count_queries(log)
    assert counts.summary["distinct_queries"].tolist() == [3, 3, 3]
    by_id = counts.queries.sort_values("query_id")
    assert by_id["stratum"].tolist() == ["head"] * 3 + ["torso"] * 3 + ["tail"] * 3


@pytest.mark.parametrize("largest", [50, 10**9])  # small counts (counted by bincount) and large ones (sorted)
def test_strata_by_frequency_level_follow_the_boundary_rule_query_by_query(largest):
    """Step 3 of every engine (strata.traffic_tiers, which numbers places only in the levels that straddle a
    cut) against the rule applied one query at a time, on three sources with many tied frequencies."""
    rng = np.random.default_rng(3)
    queries = [f"query {i}" for i in range(3000)]
    frequency = np.where(rng.random(3000) < 0.9, rng.integers(1, 6, 3000), rng.integers(1, largest, 3000))
    source = rng.integers(0, 3, 3000)
    ids = pa.array(query_ids(queries))
    cuts = (0.2, 0.5, 0.9)
    tiers = traffic_tiers(frequency, id_sort_keys(ids), source, Strata(("a", "b", "c", "d"), cuts))
    for code in range(3):
        rows = np.flatnonzero(source == code)
        expected = plain_strata({queries[r]: int(frequency[r]) for r in rows}, cuts)
        assert {queries[r]: int(tiers[r]) for r in rows} == expected
    assert sorted(set(tiers.tolist())) == [0, 1, 2, 3]


def test_the_logs_own_stratum_column_gives_strata_on_top():
    log = pd.DataFrame({"query": ["a", "a", "b", "c", "a", "d", "d", "e", "f"],
                        "source": ["human"] * 4 + ["agent"] * 4 + [""]})
    counts = count_queries(log)
    summary = counts.summary
    assert summary["stratum"].tolist() == ["agent/head", "agent/torso", "agent/tail",
                                           "human/head", "human/torso", "human/tail"]
    assert summary["traffic"].sum() == 8 and counts.dropped["no_source"] == 1
    assert summary["traffic_share"].sum() == pytest.approx(1.0)
    ids = counts.queries.loc[counts.queries["query"] == "a", "query_id"]
    assert ids.nunique() == 2  # the same text in two sources is two queries


def test_query_ids_are_a_hash_of_the_normalised_query(excite_log):
    counts = count_queries(excite_log)
    row = counts.queries[counts.queries["query"] == "maytag"].iloc[0]
    assert row["query_id"] == "q" + hashlib.md5(b"maytag").hexdigest()[:16]
    half = count_queries(excite_log.slice(0, 2000))
    shared = half.queries.merge(counts.queries, on="query")
    assert (shared["query_id_x"] == shared["query_id_y"]).all()


# --------------------------------------------------------------------------------------------- sampling
def test_sampling_is_per_stratum_with_weights(excite_log):
    counts = count_queries(excite_log)
    queries = sample_queries(counts, {"head": 10, "torso": 20, "tail": 30}, seed=3, holdout=0.2)
    assert queries.columns.tolist() == list(QUERIES_COLUMNS)
    assert queries.groupby("stratum", sort=False).size().to_dict() == {"head": 10, "torso": 20, "tail": 30}
    assert queries.groupby("stratum")["split"].apply(lambda s: (s == "test").sum()).to_dict() == {
        "head": 2, "torso": 4, "tail": 6}
    per_stratum = queries.groupby("stratum").agg(share=("stratum_share", "first"), weight=("weight", "sum"))
    assert np.allclose(per_stratum["share"], per_stratum["weight"])
    assert queries.drop_duplicates("stratum")["stratum_share"].sum() == pytest.approx(1.0)
    assert queries["query_id"].is_unique
    strata = counts.queries.set_index("query_id")["stratum"]
    assert (strata.loc[queries["query_id"]].to_numpy() == queries["stratum"].to_numpy()).all()


def test_same_seed_same_sample_other_seed_other_sample(excite_log):
    counts = count_queries(excite_log)
    first = sample_queries(counts, 20, seed=1)
    assert first.equals(sample_queries(count_queries(excite_log), 20, seed=1))
    assert set(first["query_id"]) != set(sample_queries(counts, 20, seed=2)["query_id"])


def test_holdout_marks_a_split_without_changing_the_sample(excite_log):
    counts = count_queries(excite_log)
    plain = sample_queries(counts, 20, seed=5)
    held = sample_queries(counts, 20, seed=5, holdout=0.25)
    assert held["query_id"].tolist() == plain["query_id"].tolist()
    assert held.groupby("stratum")["split"].value_counts().unstack().to_dict("index") == {
        name: {"dev": 15, "test": 5} for name in ("head", "tail", "torso")}


def test_a_count_larger_than_its_stratum_is_refused(excite_log):
    with pytest.raises(ValueError, match="stratum 'head' has 196 distinct queries, fewer than the 200"):
        sample_queries(count_queries(excite_log), 200)
    with pytest.raises(ValueError, match="no per-stratum count"):
        sample_queries(count_queries(excite_log), {"head": 1})


# ------------------------------------------------------------------------------------- DuckDB == pandas
def assert_same_counts(left, right):
    pd.testing.assert_frame_equal(left.queries, right.queries)
    pd.testing.assert_frame_equal(left.summary, right.summary)
    assert left.dropped == right.dropped and left.rows_read == right.rows_read
    assert list(left.dropped) == list(DROP_REASONS)


@pytest.mark.slow
@pytest.mark.parametrize("count_by", ["submissions", "users"])
def test_duckdb_and_pandas_agree_on_excite(excite, excite_log, count_by):
    window = Window(pd.Timestamp("1997-09-16 01:00").to_pydatetime(), None, "%y%m%d%H%M%S")
    for options in ({}, {"window": window}, {"screen": Screen(("chat",), ("maytag",))}):
        in_memory = count_queries(excite_log, count_by=count_by, **options)
        out_of_core = count_queries_duckdb([excite], EXCITE_COLUMNS, header=False, count_by=count_by,
                                           **options)
        assert_same_counts(in_memory, out_of_core)


def synthetic_log(rows: int = 10_000, seed: int = 11) -> pd.DataFrame:
    """Zipf-distributed queries with case and white-space variants, users, sources, timestamps, PII."""
    rng = np.random.default_rng(seed)
    ranks = np.minimum(rng.zipf(1.3, rows), 3000)
    words = np.array(["Red", "shoes", "cheap", "flight", "paris", "hotel", "a", "map", "tax", "form"])
    texts = [f"{words[r % 10]}  {words[(r // 10) % 10]} {r}" if r % 7 else f" {words[r % 10].upper()}"
             for r in ranks]
    texts[::997] = ["call 555-867-5309"] * len(texts[::997])
    texts[::1009] = [""] * len(texts[::1009])
    stamps = pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.integers(0, 86400 * 10, rows), unit="s")
    return pd.DataFrame({
        "query": texts,
        "user_id": [f"u{u}" for u in rng.integers(0, 500, rows)],
        "source": rng.choice(["agent", "human"], rows, p=[0.3, 0.7]),
        "timestamp": stamps.strftime("%Y-%m-%dT%H:%M:%S"),
    })


@pytest.mark.parametrize("fmt", ["tsv", "csv.gz", "jsonl", "parquet"])
def test_duckdb_and_pandas_agree_on_a_synthetic_log(tmp_path, fmt):
    frame = synthetic_log()
    path = tmp_path / f"log.{fmt}"
    if fmt == "tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif fmt == "csv.gz":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        pq.write_table(pa.Table.from_pandas(frame), path)
    columns = LogColumns(query="query", user_id="user_id", source="source", timestamp="timestamp")
    window = Window(pd.Timestamp("2026-01-03").to_pydatetime(), pd.Timestamp("2026-01-09").to_pydatetime())
    for count_by in ("submissions", "users"):
        in_memory = count_queries(read_query_log_table(path, columns), count_by=count_by, window=window)
        out_of_core = count_queries_duckdb([path], columns, count_by=count_by, window=window)
        assert_same_counts(in_memory, out_of_core)
        assert in_memory.dropped["phone"] > 0 and in_memory.dropped["outside_window"] > 0
        assert len(in_memory.summary) == 6


def test_a_pre_aggregated_log_counts_like_the_raw_log(tmp_path, excite, excite_log):
    raw = count_queries(excite_log)
    table = pd.DataFrame({"query": [q for _, _, q in excite_rows(excite)]}).value_counts().reset_index()
    path = tmp_path / "aggregated.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        table.rename(columns={"count": "n"}).to_csv(handle, index=False)
    columns = LogColumns(query="query", count="n")
    aggregated = count_queries(read_query_log_table(path, columns))
    pd.testing.assert_frame_equal(aggregated.queries, raw.queries)
    assert aggregated.dropped == raw.dropped
    assert_same_counts(aggregated, count_queries_duckdb([path], columns))


# ------------------------------------------------------------------------------------------ engine choice
def test_auto_takes_the_in_memory_engine_for_the_excite_log_and_duckdb_for_50_mib(excite, tmp_path):
    # Measured (scripts/bench_sample.py --crossover): equal up to 5 MiB, DuckDB faster from 15 MiB on.
    fifty_mib = tmp_path / "log.tsv"
    with open(fifty_mib, "wb") as handle:
        handle.truncate(50 * 2**20)  # sparse: no disk space used
    assert choose_engine([excite]) == "pandas"
    assert choose_engine([fifty_mib]) == "duckdb"
    assert choose_engine([fifty_mib], "pandas") == "pandas"
    assert choose_engine([excite], "duckdb") == "duckdb"


def test_auto_adds_up_the_logs_and_counts_a_gz_log_uncompressed(tmp_path):
    plain = tmp_path / "log.tsv"
    plain.write_bytes(b"query\n" + b"x\n" * 600)
    assert choose_engine([plain], duckdb_above_bytes=2000) == "pandas"
    assert choose_engine([plain, plain], duckdb_above_bytes=2000) == "duckdb"
    packed = tmp_path / "log.tsv.gz"
    packed.write_bytes(gzip.compress(b"query\n" + b"x\n" * 5000))
    assert packed.stat().st_size < 2000 and log_text_bytes(packed) == 10_006
    assert choose_engine([packed], duckdb_above_bytes=2000) == "duckdb"
    assert choose_engine([packed], duckdb_above_bytes=10_006) == "pandas"


def test_assign_strata_takes_any_query_ids():
    frequencies = pd.DataFrame({"query_id": ["b", "a", "c", "d"], "query": ["x", "y", "z", "w"], "source": "",
                                "frequency": [1, 1, 1, 3]})
    stratified = assign_strata(frequencies, Strata(("top", "rest"), (0.5,)))
    assert stratified[["query_id", "stratum"]].values.tolist() == [["d", "top"], ["a", "rest"], ["b", "rest"],
                                                                   ["c", "rest"]]


def test_missing_values_in_a_dataframe_are_empty_text():
    log = pd.DataFrame({"query": ["a", None, np.nan, "a"], "user_id": ["u1", "u2", "u3", None]})
    counts = count_queries(log, count_by="users")
    assert counts.dropped["empty"] == 2 and counts.dropped["no_user_id"] == 1
    assert counts.queries.set_index("query")["frequency"].to_dict() == {"a": 1}


def test_a_line_that_is_not_utf8_is_refused_by_duckdb_in_the_words_of_the_in_memory_engine(tmp_path, shared_data):
    """Issue 29: DuckDB said "Invalid Input Error: CSV Error on Line: 101" where pandas says what is wrong."""
    from evalset.sampling.sql import count_queries_duckdb

    lines = (shared_data / "querylog" / "excite-small.log").read_bytes().splitlines(keepends=True)[:100]
    log = tmp_path / "bad.log"
    log.write_bytes(b"".join(lines) + b"ab\t1\t\xff\xfequery\n")
    with pytest.raises(InputError) as refused:
        count_queries_duckdb([log], EXCITE_COLUMNS, fmt="tsv", header=False)
    assert (refused.value.path, refused.value.line) == (str(log), 101)
    assert str(refused.value).endswith(":101: not UTF-8 text (save the file as UTF-8)")


@pytest.mark.parametrize(("given", "message"), [
    ({"seed": -1}, "seed must be a non-negative integer, got -1"),
    ({"holdout": 1.0}, "holdout must be a number in [0, 1), got 1.0"),
    ({"holdout": float("inf")}, "holdout must be a number in [0, 1), got inf"),
    ({"layout": {"format": "xml"}}, "format must be one of tsv, csv, jsonl, parquet, got 'xml'"),
    ({"count_by": "sessions"}, "count_by must be one of submissions, users, got 'sessions'"),
    ({"engine": "polars"}, "engine must be one of auto, pandas, duckdb, spark, got 'polars'"),
])
def test_the_stage_refuses_what_the_command_refuses_before_reading_a_log(given, message):
    with pytest.raises(InputError) as raised:
        sample_log(["no-such.log"], 1, **{key: LogLayout(**value) if key == "layout" else value
                                          for key, value in given.items()})
    assert str(raised.value) == message
    if set(given) <= {"seed", "holdout"}:
        with pytest.raises(InputError) as raised:
            sample_queries(None, 1, **given)
        assert str(raised.value) == message
