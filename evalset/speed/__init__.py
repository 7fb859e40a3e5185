"""Low-level speed, beneath the metrics engine and the readers: exact integer keys for id strings and joins on
them (:mod:`~evalset.speed.keys`), views of arrow string bytes (:mod:`~evalset.speed.strings`), work in pieces on
both cores (:mod:`~evalset.speed.parallel`). No pandas semantics and no stage here."""
