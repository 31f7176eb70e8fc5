"""Spec prose as the plain text an agent reads (issue 25)."""

from __future__ import annotations

import time

import pytest

from typed_mcp.plan import prose

# --- plain text ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sentence", "title"),
    [
        (
            "<p>Creates a new <code>tax_id</code> object &amp; more.</p><p>Second.</p>",
            "Creates a new tax_id object & more.",
            "Creates a new tax_id object & more",
        ),
        ("List [groups](https://x.example/g) under an account.<br>More", "List groups under an account.", None),
        ("Use <owner>/<repo> as **the** name. Then more.", "Use <owner>/<repo> as the name.", None),
        ("<script>alert(1)</script><style>p {}</style>Hi <b>there</b>", "Hi there", "Hi there"),
        ("Returns a list of your `invoice` items. Sorted.", "Returns a list of your invoice items.", None),
        ("# Heading\n\n* one\n* two", "Heading", "Heading"),
    ],
)
def test_spec_prose_reads_as_plain_text(text, sentence, title):
    assert prose.first_sentence(text) == sentence
    assert prose.title_from(text) == (title or sentence.rstrip("."))


def test_spec_prose_is_read_in_bounded_time():
    """A hostile description (megabytes of nested markup) is read up to MAX_CHARS, in bounded time."""
    for hostile in ("<b>" * 2_000_000, "[" * 3_000_000 + "x", "*a " * 1_000_000, "<!--" + "-" * 3_000_000):
        started = time.perf_counter()
        prose.first_paragraph(hostile)
        assert time.perf_counter() - started < 20, hostile[:10]


def test_a_first_block_written_in_html_becomes_plain_text_and_the_rest_stays():
    text = "<p>Creates a <code>customer</code>.</p><p>It has <em>fields</em>.</p>\n\nMore in **Markdown**."
    assert prose.with_plain_first_block(text) == "Creates a customer.\n\nIt has fields.\n\nMore in **Markdown**."
    assert prose.with_plain_first_block("Plain summary\n\nMore in **Markdown**.") == (
        "Plain summary\n\nMore in **Markdown**."
    )
