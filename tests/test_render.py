from attn_preflight.render import table


def test_table_keeps_versions_and_capabilities_as_written():
    # Seen on the H200: tabulate's number parsing printed compute capability "9.0" as "9".
    for fmt in ("table", "markdown"):
        text = table(["cc", "version"], [["9.0", "12.10"]], fmt)
        assert "9.0" in text and "12.10" in text


def test_terminal_table_aligns_columns_and_stacks_lines():
    text = table(["h1", "header2"], [["a", "bb\ncc dd"], ["", "x"], ["long cell here", ""]], "table")
    assert text == (
        "h1              header2\n"
        "--------------  ---------\n"
        "a               bb\n"
        "                cc dd\n"
        "                x\n"
        "long cell here"
    )


def test_markdown_table_escapes_pipes_and_breaks_lines():
    text = table(["x", "y"], [["a|b", "one\ntwo"]], "markdown")
    assert text == "| x    | y          |\n|------|------------|\n| a\\|b | one<br>two |"


def test_wide_characters_take_two_columns():
    assert table(["x", "y"], [["✓ é 漢", "b"]], "table") == "x       y\n------  ---\n✓ é 漢  b"
