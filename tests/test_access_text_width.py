"""The access report's text table measures cells as a terminal shows them (``rich.cells``), by
a fast path where the text is printable ASCII (issue 47): the fast paths must give what
measuring every character gives, for any text a name may hold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from reconciler.render.access_parts import COLUMNS
from reconciler.render.access_text import _measured_table, _table, display_width

ASCII = st.text(st.characters(max_codepoint=0x7F), max_size=12)  # control characters too
ANY = st.text(max_size=12)
# Mostly printable ASCII, as a real site's names are, now and then a wide letter, an accent,
# a control character, a zero-width joiner or a variation selector: either path may be taken
CELL = st.one_of(
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=10),
    st.text(st.sampled_from("ab 張偉é\x1b\t\x00\u200d\ufe0f\u0301-"), max_size=6),
)
ROWS = st.lists(st.tuples(*(CELL for _ in COLUMNS)), min_size=1, max_size=6)


def _reference_table(rows: list[tuple[str, ...]], indent: str) -> list[str]:
    """The table as the report has always laid it out: every cell measured by ``cell_len``
    and padded with spaces to its column's widest, the line's trailing spaces dropped."""
    table = [COLUMNS, *rows]
    widths = [max(cell_len(cell) for cell in column) for column in zip(*table, strict=True)]
    return [
        indent
        + "  ".join(
            cell + " " * (width - cell_len(cell)) for cell, width in zip(cells, widths, strict=True)
        ).rstrip()
        for cells in table
    ]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(ASCII, ANY))
def test_display_width_is_the_cells_a_terminal_gives(text: str) -> None:
    assert display_width(text) == cell_len(text)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(ROWS)
def test_the_table_lines_up_as_measuring_every_cell_does(rows: list[tuple[str, ...]]) -> None:
    """Either path (printable ASCII padded by length, or each cell measured) lays the table
    out as measuring each cell by ``cell_len`` does."""
    expected = _reference_table(rows, "  ")
    assert _table(rows, "  ") == expected
    assert _measured_table([COLUMNS, *rows], "  ") == expected
