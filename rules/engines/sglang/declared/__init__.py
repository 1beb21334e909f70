"""Rules generated from SGLang's backend declarations: rows of gate.Gate, judged by gate.judge."""
