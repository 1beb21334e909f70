from attn_preflight.render import table


def test_table_keeps_versions_and_capabilities_as_written():
    # Seen on the H200: tabulate's number parsing printed compute capability "9.0" as "9".
    for fmt in ("table", "markdown"):
        text = table(["cc", "version"], [["9.0", "12.10"]], fmt)
        assert "9.0" in text and "12.10" in text
