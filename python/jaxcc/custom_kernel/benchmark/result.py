"""BenchmarkResult: the records of a benchmark, as a grouped table, JSON, CSV or a plot."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable

from jaxcc.errors import SpecError

from .config import RECORD_FIELDS, BenchmarkRecord

_FLOAT_FIELDS = ("median_ms", "mean_ms", "std_ms", "min_ms", "max_ms", "max_abs_diff")
_INT_FIELDS = ("n_runs", "n_batch_per_run")
_JSON_FIELDS = ("kernel_kwargs", "data_kwargs")
FORMAT_VERSION = 1


def _format_from(path: str, format: str | None) -> str:
    fmt = format or os.path.splitext(path)[1].lstrip(".").lower()
    if fmt not in ("json", "csv"):
        raise SpecError(
            f"benchmark results are saved as 'json' or 'csv' (from the suffix or format=), got "
            f"{fmt!r} for {path}"
        )
    return fmt


def _csv_value(field: str, text: str):
    if field in _JSON_FIELDS:
        return json.loads(text) if text else {}
    if text == "":
        return None
    if field in _FLOAT_FIELDS:
        return float(text)
    if field in _INT_FIELDS:
        return int(text)
    if field in ("success", "correct"):
        return text == "True"
    return text


class BenchmarkResult:
    """Records of one or more benchmarks, one per (config, backend)."""

    def __init__(self, records: Iterable[BenchmarkRecord], primitive_name: str = ""):
        self._records = list(records)
        self.primitive_name = primitive_name

    @property
    def records(self) -> list[BenchmarkRecord]:
        return list(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def labels(self) -> list[str]:
        return list(dict.fromkeys(r.label for r in self._records))

    def fastest(self, label: str | None = None) -> BenchmarkRecord | None:
        """The successful record with the smallest median (within `label` if given)."""
        timed = [
            r
            for r in self._records
            if r.success and r.median_ms is not None and (label is None or r.label == label)
        ]
        return min(timed, key=lambda r: r.median_ms) if timed else None

    # -- table -----------------------------------------------------------------------------

    def table(self, speedup_vs: str | None = None, highlight_best: bool = True) -> str:
        """A table grouped by (primitive, label). `speedup` is the baseline's median over each
        row's median (>1: faster than the baseline); the baseline is `speedup_vs` if given, else
        the reference backend of the correctness check. `*` marks the fastest row of a group."""
        header = ["primitive", "label", "backend", "median ms", "mean ms", "std ms", "min ms"]
        header += ["speedup", "correct"]
        rows = []
        groups: dict[tuple[str, str], list[BenchmarkRecord]] = {}
        for r in self._records:
            groups.setdefault((r.primitive, r.label), []).append(r)
        for (primitive, label), members in groups.items():
            baseline_name = speedup_vs or next(
                (m.reference_backend for m in members if m.reference_backend), members[0].backend
            )
            baseline = next((m for m in members if m.backend == baseline_name and m.success), None)
            best = min(
                (m for m in members if m.success and m.median_ms is not None),
                key=lambda m: m.median_ms,
                default=None,
            )
            for i, m in enumerate(members):
                mark = " *" if highlight_best and m is best and len(members) > 1 else ""
                if not m.success:
                    rows.append(
                        [primitive if i == 0 else "", label if i == 0 else "", m.backend + mark]
                        + ["failed", "", "", "", "", (m.error or "")[:60]]
                    )
                    continue
                speedup = (
                    f"{baseline.median_ms / m.median_ms:.2f}x"
                    if baseline is not None and m.median_ms
                    else "-"
                )
                verdict = {True: "yes", False: "NO", None: "-"}[m.correct]
                if m.backend == m.reference_backend and m.correct is not None:
                    verdict = "ref"
                rows.append(
                    [
                        primitive if i == 0 else "",
                        label if i == 0 else "",
                        m.backend + mark,
                        f"{m.median_ms:.4f}",
                        f"{m.mean_ms:.4f}",
                        f"{m.std_ms:.4f}",
                        f"{m.min_ms:.4f}",
                        speedup,
                        verdict,
                    ]
                )
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
        lines.append("  ".join("-" * w for w in widths))
        lines += [
            "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ]
        return "\n".join(lines)

    def print(self, speedup_vs: str | None = None, highlight_best: bool = True) -> None:
        print(self.table(speedup_vs=speedup_vs, highlight_best=highlight_best))

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<BenchmarkResult {self.primitive_name!r}: {len(self._records)} records>"

    # -- persistence -----------------------------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "primitive_name": self.primitive_name,
            "records": [r.to_dict() for r in self._records],
        }

    def save(self, path, format: str | None = None) -> str:
        """Writes JSON or CSV (chosen by `format` or the file suffix); returns the path."""
        path = os.fspath(path)
        fmt = _format_from(path, format)
        if fmt == "json":
            with open(path, "w", encoding="utf-8") as f:
                json.dump(self.to_dict(), f, indent=2)
                f.write("\n")
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=RECORD_FIELDS)
                writer.writeheader()
                for r in self._records:
                    row = r.to_dict()
                    for field in _JSON_FIELDS:
                        row[field] = json.dumps(row[field], sort_keys=True)
                    writer.writerow({k: "" if v is None else v for k, v in row.items()})
        return path

    @classmethod
    def load(cls, path, format: str | None = None) -> BenchmarkResult:
        """Reads a file written by `save` (JSON or CSV; data only, nothing is executed)."""
        path = os.fspath(path)
        fmt = _format_from(path, format)
        if fmt == "json":
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            if not isinstance(data, dict) or "records" not in data:
                raise SpecError(f"{path}: not a jaxcc benchmark result (no 'records')")
            rows = data["records"]
            name = data.get("primitive_name", "")
        else:
            with open(path, encoding="utf-8", newline="") as f:
                rows = [{k: _csv_value(k, v) for k, v in row.items()} for row in csv.DictReader(f)]
            name = rows[0]["primitive"] if rows else ""
        records = []
        for row in rows:
            unknown = set(row) - set(RECORD_FIELDS)
            if unknown:
                raise SpecError(f"{path}: unknown benchmark record fields {sorted(unknown)}")
            records.append(BenchmarkRecord(**row))
        return cls(records, primitive_name=name)

    @classmethod
    def concat(cls, results: Iterable[BenchmarkResult]) -> BenchmarkResult:
        results = list(results)
        names = ",".join(r.primitive_name for r in results if r.primitive_name)
        return cls([rec for r in results for rec in r.records], primitive_name=names)

    def plot(self, path=None, *, title: str | None = None):
        """A grouped bar chart (median per call, min-max whiskers) per label and backend; saved
        as PNG when `path` is given. Returns the matplotlib Figure."""
        from .plot import plot_result

        return plot_result(self, path, title=title)
