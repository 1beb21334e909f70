"""The engine command inside the forms recipes deploy it in: `docker run … IMAGE [ARGS]` pasted after `--`, and a
Kubernetes manifest (`check --manifest FILE.yaml [--container NAME]`: Deployment, StatefulSet, Pod, Job,
LeaderWorkerSet, KServe ServingRuntime / InferenceService). Each gives a launch command as
attn_preflight.rules.core.launch_line reads it, its environment, the engine version the image tag says (where it
says one), and what was left out (docker's own options). Imported only when such a form is given.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from attn_preflight.rules.core.errors import RulesInputError

DOCKER_PROGRAMS = ("docker", "podman", "nvidia-docker")

# `docker run` options that take a value (docker/cli cli/command/container/opts.go addFlags, run.go); every
# other option of `docker run` is a switch (-d, -i, -t, --rm, --privileged, --init, -P, --read-only, ...).
_DOCKER_VALUE_OPTIONS = frozenset(
    "-a --attach --add-host --annotation --blkio-weight --blkio-weight-device --cap-add --cap-drop "
    "--cgroup-parent --cgroupns --cidfile -c --cpu-shares --cpu-period --cpu-quota --cpu-rt-period "
    "--cpu-rt-runtime --cpus --cpuset-cpus --cpuset-mems --detach-keys --device --device-cgroup-rule "
    "--device-read-bps --device-read-iops --device-write-bps --device-write-iops --dns --dns-option "
    "--dns-search --domainname --entrypoint -e --env --env-file --expose --gpus --group-add --health-cmd "
    "--health-interval --health-retries --health-start-period --health-start-interval --health-timeout -h "
    "--hostname --ip --ip6 --ipc --isolation --kernel-memory -l --label --label-file --link "
    "--link-local-ip --log-driver --log-opt --mac-address -m --memory --memory-reservation --memory-swap "
    "--memory-swappiness --mount --name --network --net --network-alias --net-alias --oom-score-adj --pid "
    "--pids-limit --platform -p --publish --pull --restart --runtime --security-opt --shm-size "
    "--stop-signal --stop-timeout --storage-opt --sysctl --tmpfs --ulimit -u --user --userns --uts -v "
    "--volume --volume-driver --volumes-from -w --workdir".split()
)

# Images whose entrypoint is the engine's server: the arguments after the image are its flags
# (vllm docker/Dockerfile: ENTRYPOINT ["vllm", "serve"]; older images python3 -m vllm.entrypoints.openai.api_server).
_SERVE_ENTRYPOINTS = {"vllm/vllm-openai": ["vllm", "serve"]}
# Image names -> the engine they carry, for a version tag.
_ENGINE_IMAGES = {"vllm/vllm-openai": "vllm", "lmsysorg/sglang": "sglang"}
_VERSION_TAG = re.compile(r"^v?(\d+\.\d+\.\d+(?:\.?post\d+|rc\d+)?)(?:$|[-_])")
_SHELL_SEPARATORS = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_LAUNCH = re.compile(
    r"(?:^|\s)(?:python[\d.]*\s.*-m\s+(?:sglang\.launch_server|vllm\.entrypoints)|sglang\s+serve|vllm\s+serve)\b"
)


@dataclass
class Unwrapped:
    """A launch command read out of a container form."""

    command: list[str]  # the engine command with environment prefixes, as `check -- …` takes it
    form: str  # "docker run IMAGE", "Deployment/NAME container C", ...
    image: str = ""
    pins: dict[str, str] = field(default_factory=dict)  # {engine: version} from the image tag
    ignored: list[str] = field(default_factory=list)  # docker options / manifest fields left out, as written
    notes: list[str] = field(default_factory=list)
    prefix: list[str] = field(default_factory=list)  # `docker run [OPTIONS] IMAGE`, as pasted (a correction keeps it)
    implied: list[str] = field(default_factory=list)  # the image's entrypoint words put before the arguments
    model: Optional[str] = None  # the model id a KServe storageUri hf://REPO/MODEL gives for the mounted /mnt/models
    gpus_per_pod: Optional[int] = None  # the container's nvidia.com/gpu limit (a manifest's node, as --gpu-count)
    nnodes: Optional[int] = None  # a LeaderWorkerSet's group size: the pods (nodes) one replica spans

    def around(self, corrected: Sequence[str]) -> list[str]:
        """A corrected engine command put back in its `docker run`: the docker options and image as pasted, a
        changed environment variable as `-e NAME=VALUE`, the entrypoint's own words left to the image."""
        words = list(corrected)
        given = {word for word in self.command if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word)}
        env = []
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            word = words.pop(0)
            if word not in given:
                env += ["-e", word]
        if self.implied and words[: len(self.implied)] == self.implied:
            words = words[len(self.implied) :]
        kept = {w.split("=", 1)[0] for w in corrected if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)}
        gone = {w.split("=", 1)[0] for w in given} - kept  # a variable the correction drops leaves the -e too
        prefix: list[str] = []
        skip_next = False
        for index, word in enumerate(self.prefix):
            if skip_next:
                skip_next = False
                continue
            value = self.prefix[index + 1] if index + 1 < len(self.prefix) else ""
            if word in ("-e", "--env") and value.split("=", 1)[0] in gone:
                skip_next = True
                continue
            if word.startswith("--env=") and word[6:].split("=", 1)[0] in gone:
                continue
            prefix.append(word)
        image_at = len(prefix) - 1
        return [*prefix[:image_at], *env, *prefix[image_at:], *words]


def image_engine(image: str) -> tuple[Optional[str], Optional[str], str]:
    """(engine, version, repository) an image reference says: lmsysorg/sglang:v0.4.9.post3-cu128-b200 -> sglang
    0.4.9.post3; a tag without a version (latest, deploy, glm51) or another image -> None for what it does not
    say."""
    reference = image.split("@", 1)[0]
    name, _, tag = reference.rpartition(":") if ":" in reference.rsplit("/", 1)[-1] else (reference, "", "")
    repository = re.sub(r"^(docker\.io/|registry\.hub\.docker\.com/)", "", name)
    engine = next((e for prefix, e in _ENGINE_IMAGES.items() if repository == prefix), None)
    match = _VERSION_TAG.match(tag) if engine else None
    version = match.group(1).replace("post", ".post").replace("..", ".") if match else None
    return engine, version, repository


def _env_pairs(values: Sequence[str]) -> tuple[list[str], list[str]]:
    """docker -e values -> (NAME=VALUE assignments, names passed from the host without a value)."""
    assigned: list[str] = []
    from_host: list[str] = []
    for value in values:
        (assigned if "=" in value else from_host).append(value)
    return assigned, from_host


def _engine_words(words: list[str], repository: str, entrypoint: Optional[str]) -> list[str]:
    """The engine command in a container's command line: a shell's `-c SCRIPT` read for its launch command, the
    image's own entrypoint put before bare arguments."""
    if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("sh", "bash") and words[1] in ("-c", "-lc", "-ec"):
        for part in _SHELL_SEPARATORS.split(words[2]):
            if _LAUNCH.search(part):
                found = shlex.split(part.replace("\\\n", " "))
                return found[1:] if found[:1] == ["exec"] else found
        raise RulesInputError(f"no engine launch command in the shell script: {words[2][:80]!r}")
    if words and (_LAUNCH.search(" ".join(words[:4])) or words[0] in ("vllm", "sglang")):
        return words
    if entrypoint is None and repository in _SERVE_ENTRYPOINTS:
        return [*_SERVE_ENTRYPOINTS[repository], *words]
    if entrypoint is not None:
        return [*shlex.split(entrypoint), *words]
    what = " ".join(words[:3]) or "nothing"
    raise RulesInputError(
        f"the container runs {what!r}, not an engine launch command (paste the `vllm serve …` or `python3 -m "
        "sglang.launch_server …` line that runs inside it)"
    )


def docker_run(tokens: Sequence[str]) -> Unwrapped:
    """`[ENV=… ]docker run [OPTIONS] IMAGE [COMMAND/ARGS…]` -> the engine command in it."""
    words = list(tokens)
    if len(words) < 2 or words[1] != "run":
        raise RulesInputError(f"{' '.join(words[:2])}: only `docker run … IMAGE …` is read")
    rest = words[2:]
    env_values: list[str] = []
    ignored: list[str] = []
    entrypoint: Optional[str] = None
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option == "--":
            break
        name, has_value, value = option.partition("=")
        takes = name in _DOCKER_VALUE_OPTIONS or (
            not name.startswith("--") and len(name) > 2 and f"-{name[-1]}" in _DOCKER_VALUE_OPTIONS
        )  # -it, -itd: switches; -e VALUE, -p VALUE after switches (-ite X) take the value
        if takes and not has_value:
            if not rest:
                raise RulesInputError(f"docker run {option} has no value")
            value = rest.pop(0)
        if name in ("-e", "--env"):
            env_values.append(value)
        elif name == "--entrypoint":
            entrypoint = value
        else:
            ignored.append(name)
    if not rest:
        raise RulesInputError("docker run without an image")
    image, args = rest[0], rest[1:]
    assigned, from_host = _env_pairs(env_values)
    engine, version, repository = image_engine(image)
    notes = [f"-e {name}: its value comes from the host, not known here" for name in from_host]
    if "--env-file" in ignored:
        notes.append("--env-file: the file's variables are not read")
    if entrypoint is not None and not args:
        raise RulesInputError(
            f"docker run --entrypoint {entrypoint} {image} starts a shell, not the engine: paste the command run "
            "inside it"
        )
    command = _engine_words(args, repository, entrypoint)
    implied = command[: len(command) - len(args)] if command[len(command) - len(args) :] == args else []
    return Unwrapped(
        command=[*assigned, *command],
        form=f"docker run {image}",
        image=image,
        pins={engine: version} if engine and version else {},
        ignored=ignored,
        notes=notes,
        prefix=words[: len(words) - len(args)],
        implied=implied,
    )


# --- Kubernetes manifests -------------------------------------------------------------------------------------

_POD_SPEC_PATHS = {
    "Pod": (("spec",),),
    "Deployment": (("spec", "template", "spec"),),
    "StatefulSet": (("spec", "template", "spec"),),
    "DaemonSet": (("spec", "template", "spec"),),
    "ReplicaSet": (("spec", "template", "spec"),),
    "Job": (("spec", "template", "spec"),),
    "LeaderWorkerSet": (
        ("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"),
        ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"),
    ),
    "ServingRuntime": (("spec",),),
    "ClusterServingRuntime": (("spec",),),
    "InferenceService": (("spec", "predictor"), ("spec", "predictor", "model")),
}


def _at(document: Any, path: Sequence[str]) -> Any:
    for key in path:
        document = document.get(key) if isinstance(document, dict) else None
    return document


def manifest_containers(documents: Sequence[Any]) -> list[tuple[str, dict]]:
    """(where, container) for each container of each workload in the manifest's documents (a List's items too)."""
    found: list[tuple[str, dict]] = []
    queue = [d for d in documents if isinstance(d, dict)]
    while queue:
        document = queue.pop(0)
        kind = document.get("kind")
        if kind == "List" and isinstance(document.get("items"), list):
            queue.extend(d for d in document["items"] if isinstance(d, dict))
            continue
        name = _at(document, ("metadata", "name")) or "?"
        for path in _POD_SPEC_PATHS.get(str(kind), ()):
            spec = _at(document, path)
            if isinstance(spec, dict):
                if "containers" in spec and isinstance(spec["containers"], list):
                    containers = spec["containers"]
                elif path[-1] == "model":  # KServe's model spec is itself a container
                    containers = [dict(spec, name=spec.get("name") or "kserve-container")]
                else:
                    containers = []
                for container in containers:
                    if isinstance(container, dict):
                        where = f"{kind}/{name}" + (f" ({path[-2]})" if kind == "LeaderWorkerSet" else "")
                        found.append((where, container))
    return found


# KServe mounts the model its storage initializer downloads here (kserve docs model-serving/storage/overview:
# "Storage Initializer ... to a local directory where the model server can access them", /mnt/models).
KSERVE_MOUNT = "/mnt/models"
# hf://${REPO}/${MODEL}:${HASH}(optional) (kserve docs model-serving/storage/providers/hf)
_HF_URI = re.compile(r"^hf://([A-Za-z0-9][\w.-]*/[\w.-]+)(?::[\w.-]+)?/?$")


def _storage_uris(documents: Sequence[Any], container: dict) -> list[str]:
    """The KServe storage URIs of the manifest: each InferenceService's predictor (model) storageUri and the
    container's STORAGE_URI variable (KServe's custom-container form)."""
    found: list[str] = []
    queue = [d for d in documents if isinstance(d, dict)]
    while queue:
        document = queue.pop(0)
        if document.get("kind") == "List" and isinstance(document.get("items"), list):
            queue.extend(d for d in document["items"] if isinstance(d, dict))
        elif document.get("kind") == "InferenceService":
            for path in (("spec", "predictor", "model", "storageUri"), ("spec", "predictor", "storageUri")):
                value = _at(document, path)
                if isinstance(value, str) and value not in found:
                    found.append(value)
    for variable in container.get("env") or []:
        if (
            isinstance(variable, dict)
            and variable.get("name") == "STORAGE_URI"
            and isinstance(variable.get("value"), str)
        ):
            if variable["value"] not in found:
                found.append(variable["value"])
    return found


def _mounted_model(words: Sequence[str]) -> bool:
    """The command serves the model KServe mounts (/mnt/models), or names none."""
    served = None
    for index, word in enumerate(words):
        name, equals, value = word.partition("=")
        if name in ("--model", "--model-path", "--model_path"):
            served = value if equals else (words[index + 1] if index + 1 < len(words) else "")
            break
        if index and words[index - 1] == "serve" and not word.startswith("-"):
            served = word
            break
    return served is None or served == KSERVE_MOUNT or served.startswith(KSERVE_MOUNT + "/")


def _group_size(documents: Sequence[Any], container: dict) -> Optional[int]:
    """The LeaderWorkerSet group size (leader + workers: the pods one replica spans) of the workload holding
    `container` (leaderworkerset.x-k8s.io/v1 LeaderWorkerTemplate.size, default 1); None for any other kind."""
    for document in documents:
        if not isinstance(document, dict) or document.get("kind") != "LeaderWorkerSet":
            continue
        templates = _at(document, ("spec", "leaderWorkerTemplate")) or {}
        for role in ("leaderTemplate", "workerTemplate"):
            containers = _at(templates, (role, "spec", "containers")) or []
            if any(candidate is container for candidate in containers):
                size = templates.get("size", 1)
                return size if isinstance(size, int) and not isinstance(size, bool) and size >= 1 else None
    return None


def _gpus(container: dict) -> Optional[int]:
    """The container's nvidia.com/gpu limit (else its request): the GPUs of its pod, one node's share."""
    resources = container.get("resources") or {}
    for section in ("limits", "requests"):
        value = (resources.get(section) or {}).get("nvidia.com/gpu") if isinstance(resources, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
            return int(value)
    return None


def _launches(container: dict) -> bool:
    """The container's command line runs an engine's server (an LWS worker that only joins Ray does not)."""
    text = " ".join(str(x) for x in (container.get("command") or []) + (container.get("args") or []))
    return bool(_LAUNCH.search(text))


def _engine_image(container: dict) -> bool:
    engine, _, _ = image_engine(str(container.get("image", "")))
    return engine is not None


def manifest_command(documents: Sequence[Any], path: str, container_name: Optional[str]) -> Unwrapped:
    """The engine command of the manifest's container named `container_name`, or of its one engine container."""
    containers = manifest_containers(documents)
    if not containers:
        raise RulesInputError(
            f"--manifest {path}: no containers found (read: Pod, Deployment, StatefulSet, Job, LeaderWorkerSet, "
            "ServingRuntime, InferenceService)"
        )
    if container_name is not None:
        chosen = [(w, c) for w, c in containers if c.get("name") == container_name]
        if not chosen:
            names = ", ".join(sorted({str(c.get("name")) for _, c in containers}))
            raise RulesInputError(f"--container {container_name}: no such container in {path} (it has: {names})")
    else:
        chosen = (
            [(w, c) for w, c in containers if _launches(c)]
            or [(w, c) for w, c in containers if _engine_image(c) and not c.get("command")]
            or containers
        )
    if len({id(c) for _, c in chosen}) > 1 and len({str(c.get("name")) for _, c in chosen}) > 1:
        names = ", ".join(f"{c.get('name')} ({w})" for w, c in chosen)
        raise RulesInputError(f"--manifest {path}: several containers ({names}); name one with --container")
    where, container = chosen[0]
    image = str(container.get("image", ""))
    engine, version, repository = image_engine(image)
    words = [str(x) for x in (container.get("command") or [])] + [str(x) for x in (container.get("args") or [])]
    entrypoint = None
    command = _engine_words(words, repository, entrypoint)
    env: list[str] = []
    notes: list[str] = []
    ignored: list[str] = []
    for variable in container.get("env") or []:
        if not isinstance(variable, dict) or "name" not in variable:
            continue
        if "value" in variable:
            env.append(f"{variable['name']}={variable['value']}")
        else:
            notes.append(
                f"env {variable['name']}: set from {', '.join(k for k in variable if k != 'name')}, not known here"
            )
    if container.get("envFrom"):
        notes.append("envFrom: the ConfigMap's / Secret's variables are not read")
    for key in ("resources", "ports", "volumeMounts", "readinessProbe", "livenessProbe"):
        if key in container:
            ignored.append(key)
    model = None
    uris = _storage_uris(documents, container)
    if len(uris) == 1 and _mounted_model(command):
        match = _HF_URI.match(uris[0])
        if match:
            model = match.group(1)
            notes.append(f"storageUri {uris[0]}: the model is {model} (KServe downloads it to {KSERVE_MOUNT})")
        else:
            notes.append(f"storageUri {uris[0]}: the model KServe mounts at {KSERVE_MOUNT}, not readable here")
    elif len(uris) > 1:
        notes.append(f"storageUri: several ({', '.join(uris)}); none is taken as the model")
    gpus, size = _gpus(container), _group_size(documents, container)
    if size is not None:
        per_pod = f"{gpus} GPUs per pod" if gpus else "GPUs per pod not given (nvidia.com/gpu)"
        total = f" = {size * gpus} GPUs" if gpus else ""
        notes.append(f"LeaderWorkerSet group size {size} x {per_pod}{total}: judged as {size} nodes")
    return Unwrapped(
        command=[*env, *command],
        form=f"{where} container {container.get('name')}",
        image=image,
        pins={engine: version} if engine and version else {},
        ignored=ignored,
        notes=notes,
        model=model,
        gpus_per_pod=gpus,
        nnodes=size,
    )


def unwrap(
    command: Sequence[str], manifest: Optional[str] = None, container: Optional[str] = None
) -> Optional[Unwrapped]:
    """The engine command of a pasted `docker run …` or of `--manifest FILE`; None for a plain launch command."""
    if manifest is not None:
        from attn_preflight.yaml_files import YamlFileError, read_yaml_documents

        if command:
            raise RulesInputError("--manifest gives the command: paste none after --")
        try:
            documents = read_yaml_documents(manifest, "--manifest")
        except YamlFileError as err:
            raise RulesInputError(str(err)) from None
        return manifest_command(documents, manifest, container)
    if container is not None:
        raise RulesInputError("--container names a container of --manifest FILE; add --manifest")
    words = list(command)
    if len(words) == 1 and any(c.isspace() for c in words[0]):
        try:
            words = shlex.split(words[0].replace("\\\n", " "))
        except ValueError as err:
            raise RulesInputError(f"cannot parse the pasted command: {err}") from None
    prefix = []
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        prefix.append(words.pop(0))
    if not words or words[0].rsplit("/", 1)[-1] not in DOCKER_PROGRAMS:
        return None
    unwrapped = docker_run(words)
    unwrapped.ignored = [f"(host) {name}" for name in prefix] + unwrapped.ignored
    return unwrapped
