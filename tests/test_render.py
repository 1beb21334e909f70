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


# --- fitting a width ---------------------------------------------------------------------------------

LONG = "found attention backend fa4 (paged KV cache) on A100 (SM80); required SM90 or newer for fa4"


def test_a_table_too_wide_wraps_its_widest_column_at_spaces_only():
    rows = [["FAIL", "fa4-paged-kv-sm8x", LONG, "--attention-backend triton"]]
    text = table(["status", "rule", "found vs required", "fix"], rows, "table", width=90, whole={3})
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 90 and len(lines) > 3
    assert sorted(" ".join(lines[2:]).split()) == sorted(" ".join(rows[0]).split())  # every word whole
    assert "--attention-backend triton" in lines[2]  # a `whole` column's line is never cut


def test_a_table_that_fits_is_left_as_it_is():
    rows = [["FAIL", "fa4-paged-kv-sm8x", LONG]]
    assert table(["a", "b", "c"], rows, "table", width=200) == table(["a", "b", "c"], rows, "table")


def test_too_narrow_for_a_readable_table_each_row_is_a_block():
    rows = [["FAIL", "fa4-paged-kv-sm8x", LONG, "--attention-backend triton"]]
    text = table(["status", "rule", "found vs required", "fix"], rows, "table", width=60, whole={3}, title_columns=2)
    lines = text.splitlines()
    assert lines[0] == "FAIL  fa4-paged-kv-sm8x"
    assert (
        lines[1].startswith("  found vs required: found attention") and lines[-1] == "  fix: --attention-backend triton"
    )
    assert lines[2].startswith(" " * len("  found vs required: ")) and max(len(line) for line in lines) <= 60


def test_a_token_longer_than_the_room_keeps_its_line_whole():
    path = "/very/long/path/to/a/model/snapshot/0123456789abcdef0123456789abcdef/config.json"
    text = table(["k", "v"], [["model", f"read from {path} today"]], "table", width=50)
    assert any(line.strip().endswith(path) or path in line for line in text.splitlines())
    assert all(len(line) <= 50 for line in text.splitlines() if path not in line)


def test_a_grid_of_short_cells_is_split_into_column_groups():
    headers = ["gpu"] + [f"backend_{i}" for i in range(12)]
    rows = [["H100"] + ["pass"] * 12, ["B200"] + ["FAIL"] * 12]
    text = table(headers, rows, "table", width=80, split=True)
    tables = text.split("\n\n")
    assert len(tables) > 1 and all(t.startswith("gpu") for t in tables)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert sorted(h for t in tables for h in t.splitlines()[0].split()[1:]) == sorted(headers[1:])


def test_markdown_ignores_the_width():
    rows = [["FAIL", LONG]]
    assert table(["s", "m"], rows, "markdown", width=30) == table(["s", "m"], rows, "markdown")


def test_prose_wraps_with_a_hanging_indent_under_its_bullet_or_label():
    from attn_preflight.render import Screen, wrap_lines

    text = wrap_lines(f"- fa4-paged-kv-sm8x: {LONG}\nnote: {LONG}", Screen(width=40))
    lines = text.splitlines()
    assert all(len(line) <= 40 for line in lines)
    continued = [line for line in lines if not line.startswith(("- ", "note: "))]
    assert continued and all(line.startswith(("  ", "      ")) for line in continued)
    assert lines[lines.index(next(line for line in lines if line.startswith("note: "))) + 1].startswith(" " * 6)


def test_status_words_are_coloured_only_for_a_colour_screen():
    from attn_preflight.render import PLAIN, Screen, status_word

    colour = Screen(colour=True)
    assert status_word("FAIL", PLAIN) == "FAIL" and status_word("FAIL", Screen(width=80)) == "FAIL"
    assert status_word("FAIL", colour).startswith("\x1b[31m") and "FAIL" in status_word("FAIL", colour)
    assert status_word("ERROR", colour, "fail") == status_word("ERROR", colour, "FAIL") != "ERROR"
    assert status_word("skipped", colour) == "skipped"  # no status: never coloured
    table_text = table(["s"], [[status_word("WARN", colour)], ["UNKNOWN"]], "table")
    assert table_text.splitlines()[1] == "-" * len("UNKNOWN")  # colour codes take no room


def test_reflow_joins_a_hard_wrapped_paragraph_and_keeps_lists_and_commands():
    from attn_preflight.render import PLAIN, Screen, reflow

    text = "Checks that torch\nhas code for the GPU.\n\n- one item\n- two\n  continued\n$ pip install torch\nafter"
    assert reflow(text, Screen(width=80)) == (
        "Checks that torch has code for the GPU.\n\n- one item\n- two\n  continued\n$ pip install torch\nafter"
    )
    assert reflow(text, PLAIN) == text


def test_a_detail_column_moves_under_its_row_when_the_table_is_too_wide():
    rows = [["fa4-dense", "skipped", LONG], ["sdpa-flash", "ok", ""]]
    text = table(["kernel", "status", "why"], rows, "table", width=60, detail=2)
    lines = text.splitlines()
    assert lines[0].split() == ["kernel", "status"] and lines[2].split() == ["fa4-dense", "skipped"]
    indent = lines[0].index("status")
    hang = indent + len("why: ")
    assert lines[3].startswith(" " * indent + "why: found") and lines[4][:hang].strip() == "" and lines[4][hang] != " "
    assert lines[-1].split() == ["sdpa-flash", "ok"] and max(len(line) for line in lines) <= 60
    assert sorted(" ".join(lines[3:-1]).split()) == sorted(["why:", *LONG.split()])
    assert table(["kernel", "status", "why"], rows, "table", width=200, detail=2) == table(
        ["kernel", "status", "why"], rows, "table"
    )  # it fits: the detail keeps its column


def test_a_detail_that_wraps_to_two_lines_keeps_its_column():
    rows = [["general-model-config", "any", "The model's config.json can be read by the rules"]]
    text = table(["rule", "engine", "title"], rows, "table", width=60, detail=2)
    lines = text.splitlines()
    assert lines[0].split() == ["rule", "engine", "title"] and len(lines) == 4
    assert max(len(line) for line in lines) <= 60
