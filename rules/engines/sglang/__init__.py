"""SGLang's pack: backend capabilities per release, SGLang's own resolution, its flag choices and rules."""
