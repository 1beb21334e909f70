"""Environment variables that change which attention backend or kernel build gets used, secrets redacted; and
`redact_text`, which every sink (stdout, --output files, error lines, the import cache) passes text through."""

from __future__ import annotations

import os
import re
from typing import Mapping, Optional

# Prefixes read by the serving engines and kernel libraries when they pick or build kernels.
RELEVANT_PREFIXES = (
    "SGLANG_",
    "SGL_",
    "VLLM_",
    "FLASH_ATTENTION_",
    "FLASHINFER_",
    "CUTE_DSL_",
    "CUTLASS_",
    "TORCH_",
    "PYTORCH_",
    "TORCHINDUCTOR_",
    "CUDA_",
    "CUDNN_",
    "CUBLAS_",
    "NVIDIA_",
    "NCCL_",
    "TRITON_",
    "XFORMERS_",
    "DG_",  # DeepGEMM (DG_JIT_*)
)
RELEVANT_NAMES = ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "CUDA_HOME", "CUDA_PATH")

SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
REDACTED = "***"
# scheme://user:password@host. The password runs to the last '@' before a space, quote or tag: it may hold '/'
# ("abc/def") or an unescaped '@'; masking a path's '@' too errs on the safe side.
# The scheme starts where no scheme character precedes (else every letter of a long word would start a scan to
# its end: quadratic).
_URL_PASSWORD = re.compile(r"(?P<head>(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\"'<>]*):[^\s\"<>]*@")
# NAME=VALUE (a pasted env prefix, a variable in a library's message) and --api-key VALUE / --hf-token=VALUE; a
# value ends at a quote too, so a shell-quoted '--api-key=VALUE' keeps its closing quote.
# Any NAME= is found (one scan per word), its name then tested for a secret word: a pattern with the words inside
# the name backtracks quadratically over a long word.
_ASSIGNMENT = re.compile(r"(?P<head>\b(?P<name>[A-Za-z0-9_]+)=)[^\s\"'<>]+")
# A flag is secret when one of its words is (--api-key, --hf-token), not --max-total-tokens.
_SECRET_FLAG = re.compile(
    r"(?P<head>--(?:[a-z0-9]+-)*(?:"
    + "|".join(SECRET_WORDS)
    + r"|credentials)(?:-[a-z0-9]+)*(?:=|\s+))[^\s\"'<>-][^\s\"'<>]*",
    re.IGNORECASE,
)
# Tokens whose shape says what they are: Hugging Face, OpenAI-style, GitHub, AWS access key ids, Slack, Bearer.
_TOKEN_SHAPES = re.compile(
    r"\b(?:hf_[A-Za-z0-9]{8,}|sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{12,}|xox[abpr]-[A-Za-z0-9-]{8,})|(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}"
)
MIN_SECRET_VALUE = 6  # a secret variable's value this long or longer is masked wherever it appears


def is_relevant(name: str) -> bool:
    return name in RELEVANT_NAMES or name.startswith(RELEVANT_PREFIXES)


def redact(name: str, value: str) -> str:
    if any(word in name.upper() for word in SECRET_WORDS):
        return REDACTED
    return redact_url(value)


def redact_url(value: str) -> str:
    return _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:{REDACTED}@", value)


def is_secret_flag(flag: str) -> bool:
    """--api-key, --hf-token, --aws-credentials: one of the flag's words is a secret word, as _SECRET_FLAG
    reads it; --max-total-tokens and --speculative-num-draft-tokens are counts, not secrets."""
    words = re.split(r"[-_]+", flag.strip("-").upper())
    return any(word in SECRET_WORDS or word == "CREDENTIALS" for word in words)


_URL_PIECES = re.compile(r"([\s\"<>]+)")  # what a URL password never holds: the text between is searched apart


def _url_passwords(text: str) -> str:
    """_URL_PASSWORD masked, piece by piece and only up to each piece's last '@': linear in the text (a
    password runs to the last '@', so a search from every '://' to the end would be quadratic)."""
    if "://" not in text or "@" not in text:
        return text
    out = []
    for piece in _URL_PIECES.split(text):
        at = piece.rfind("@")
        if at < 0 or "://" not in piece:
            out.append(piece)
            continue
        head = _URL_PASSWORD.sub(lambda m: f"{m.group('head')}:{REDACTED}@", piece[: at + 1])
        out.append(head + piece[at + 1 :])
    return "".join(out)


def _masked_assignment(match: re.Match) -> str:
    name = match.group("name").upper()
    return match.group("head") + REDACTED if any(word in name for word in SECRET_WORDS) else match.group()


def redact_text(text: str, environ: Optional[Mapping[str, str]] = None) -> str:
    """`text` with every secret we can recognise masked: URL passwords, NAME=VALUE and --flag VALUE where the
    name says secret, token shapes, and the value of any secret-named variable set in `environ`."""
    environ = os.environ if environ is None else environ
    for name, value in environ.items():
        if len(value) >= MIN_SECRET_VALUE and value in text and any(w in name.upper() for w in SECRET_WORDS):
            text = text.replace(value, REDACTED)
    text = _url_passwords(text)
    text = _ASSIGNMENT.sub(_masked_assignment, text)
    text = _SECRET_FLAG.sub(lambda m: m.group("head") + REDACTED, text)
    return _TOKEN_SHAPES.sub(REDACTED, text)


def cache_home(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The base of our caches: $XDG_CACHE_HOME when it is an absolute path (the XDG Base Directory spec: a
    relative one is invalid and ignored), else $HOME/.cache when HOME is absolute; None for no cache at all
    (HOME='' must not mean /.cache, nor a relative path mean the working directory)."""
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return xdg
    home = environ["HOME"] if "HOME" in environ else os.path.expanduser("~")
    return os.path.join(home, ".cache") if os.path.isabs(home) else None


NO_CACHE_HOME = "no cache directory: XDG_CACHE_HOME is not an absolute path and neither is HOME"


def relevant_environment(environ: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {name: redact(name, value) for name, value in sorted(environ.items()) if is_relevant(name)}
