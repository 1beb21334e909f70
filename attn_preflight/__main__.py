from attn_preflight.start import main

main()
