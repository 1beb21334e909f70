from attn_preflight.cli import main

main()
