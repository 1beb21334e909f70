"""`check -- docker run …` and `check --manifest FILE [--container NAME]` (issue 23): the engine command read out of
the forms the recipes deploy it in. Lines from tests/fixtures/recipe_lines.json and manifests from
tests/fixtures/manifests/ (each cites its source)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from attn_preflight.containers import docker_run, image_engine
from tests.cli_run import assert_clean_outcome, check_json, finding, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = json.loads((FIXTURES / "recipe_lines.json").read_text(encoding="utf-8"))["lines"]
MANIFESTS = FIXTURES / "manifests"


def docker_line(image: str) -> tuple[str, list[str]]:
    (line,) = [line for line in CORPUS if line["command"].startswith("docker run") and image in line["command"]]
    return line["gpu"], shlex.split(line["command"].replace("\\\n", " "))


@pytest.fixture(autouse=True)
def empty_hub(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))


def test_vllm_image_arguments_are_vllm_serve_flags():
    """vllm-project/recipes GLM/GLM5.md: `docker run … vllm/vllm-openai:glm51 zai-org/GLM-5.1-FP8 --tensor-parallel-size
    8 …`; the image's entrypoint is `vllm serve`, its tag names no version."""
    gpu, tokens = docker_line("vllm/vllm-openai:glm51")
    run, report = check_json(["--gpu", gpu, "--", *tokens])
    assert run.code in (0, 1), run.err
    config = report["config"]
    assert config["engine"] == "vllm" and config["tp_size"] == 8
    assert config["model_missing"] == "zai-org/GLM-5.1-FP8"
    assert "docker run vllm/vllm-openai:glm51" in config["origin"] and "names no engine version" in config["origin"]
    assert any(item.startswith("[docker] --gpus -p --ipc -v") for item in config["ignored"])


def test_sglang_image_runs_the_pasted_launch_server():
    """sglang benchmark/deepseek_v3/README.md "Using Docker": `docker run … lmsysorg/sglang:latest python3 -m
    sglang.launch_server --model deepseek-ai/DeepSeek-V3 --tp 8 …` on 8xH200."""
    gpu, tokens = docker_line("--privileged lmsysorg/sglang:latest")
    run, report = check_json(["--gpu", gpu, "--", *tokens])
    assert run.code == 0, run.err
    assert report["config"]["engine"] == "sglang" and report["config"]["tp_size"] == 8
    assert report["config"]["model"]["name"] == "deepseek-v3"
    assert report["verdict"] in ("pass", "warn")


def test_an_image_tag_pins_the_engine_version():
    assert image_engine("lmsysorg/sglang:v0.4.9.post3-cu128-b200") == ("sglang", "0.4.9.post3", "lmsysorg/sglang")
    assert image_engine("docker.io/vllm/vllm-openai:v0.11.0") == ("vllm", "0.11.0", "vllm/vllm-openai")
    assert image_engine("vllm/vllm-openai:latest")[1] is None
    assert image_engine("rocm/vllm:rocm6.2_mi300")[0] is None
    run, report = check_json(
        ["--gpu", "H100", "--", "docker", "run", "--gpus", "all", "-e", "VLLM_ATTENTION_BACKEND=FLASHINFER",
         "vllm/vllm-openai:v0.11.0", "--model", "llama-3.1-8b"]
    )  # fmt: skip
    assert report["target"]["versions"]["vllm"] == "0.11.0"
    assert report["config"]["attention_backend"] == "FLASHINFER"
    pinned = check_json(
        ["--gpu", "H100", "--engine-version", "vllm==0.10.0", "--", "docker", "run", "vllm/vllm-openai:v0.11.0",
         "--model", "llama-3.1-8b"]
    )[1]  # fmt: skip
    assert pinned["target"]["versions"]["vllm"] == "0.10.0"  # the user's pin wins over the tag


def test_docker_options_with_values_and_switch_groups():
    unwrapped = docker_run(
        ["docker", "run", "-itd", "--name", "x", "--shm-size", "16g", "-e", "HF_TOKEN", "--env=SGLANG_X=1",
         "lmsysorg/sglang:v0.5.3", "python3", "-m", "sglang.launch_server", "--model-path", "m"]
    )  # fmt: skip
    assert unwrapped.command == ["SGLANG_X=1", "python3", "-m", "sglang.launch_server", "--model-path", "m"]
    assert unwrapped.ignored == ["-itd", "--name", "--shm-size"]
    assert unwrapped.pins == {"sglang": "0.5.3"}
    assert unwrapped.notes == ["-e HF_TOKEN: its value comes from the host, not known here"]


def test_a_shell_entrypoint_is_not_a_launch_command():
    """vllm-project/recipes Llama/Llama4-Scout.md starts a shell in the container (--entrypoint /bin/bash)."""
    argv = ["check", "--gpu", "H100", "--", "docker", "run", "--ipc=host", "--gpus", "all", "--entrypoint",
            "/bin/bash", "--rm", "-it", "vllm/vllm-openai:deploy"]  # fmt: skip
    run = run_cli(argv)
    assert_clean_outcome(run, argv)
    assert run.code == 2 and "starts a shell, not the engine" in run.err


def test_a_deployment_reads_the_shell_command_of_its_container():
    """vllm docs/deployment/k8s.md: command ["/bin/sh", "-c"], args ["vllm serve mistralai/Mistral-7B-Instruct-v0.3
    --trust-remote-code --enable-chunked-prefill --max_num_batched_tokens 1024"]."""
    run, report = check_json(["--gpu", "H100", "--manifest", str(MANIFESTS / "vllm-k8s-deployment.yaml")])
    assert run.code == 0, run.err
    config = report["config"]
    assert config["engine"] == "vllm" and config["model"]["name"] == "mistral-7b"
    assert "Deployment/mistral-7b container mistral-7b" in config["origin"]
    assert config["flags"]["max_num_batched_tokens"] == 1024  # the shell line's flag reached the config (memory)
    assert any("resources" in item for item in config["ignored"])
    assert any("HUGGING_FACE_HUB_TOKEN: set from valueFrom" in item for item in config["ignored"])


def test_a_leader_worker_set_is_judged_by_its_leader():
    """vllm docs/deployment/frameworks/lws.md: the leader's `sh -c` script runs the Ray bootstrap, then the server
    with TP 8 x PP 2; the worker only joins Ray."""
    manifest = str(MANIFESTS / "vllm-lws.yaml")
    run, report = check_json(["--gpu", "16xH100", "--manifest", manifest])
    config = report["config"]
    assert (config["tp_size"], config["pp_size"]) == (8, 2) and config["model"]["name"] == "llama-3.1-405b"
    assert finding(report, "parallel-gpu-count")["status"] == "pass"
    argv = ["check", "--gpu", "H100", "--manifest", manifest, "--container", "vllm-worker"]
    worker = run_cli(argv)
    assert_clean_outcome(worker, argv)
    assert worker.code == 2 and "no engine launch command in the shell script" in worker.err


def test_a_leader_worker_set_group_is_its_nodes(tmp_path):
    """The same lws.yaml: group size 2 x nvidia.com/gpu 8 per pod = 16 GPUs, judged as 2 nodes of 8 (--gpu H100
    takes the pod's 8 as the node's count); with size 1 the group has 8 GPUs, too few for TP 8 x PP 2."""
    manifest = MANIFESTS / "vllm-lws.yaml"
    run, report = check_json(["--gpu", "H100", "--manifest", str(manifest)])
    assert report["target"]["gpu_count"] == 8 and report["config"]["flags"]["nnodes"] == 2
    gpus = finding(report, "parallel-gpu-count")
    assert gpus["status"] == "pass" and "16 GPUs over --nnodes 2: 8 per node" in gpus["message"]
    assert any("group size 2 x 8 GPUs per pod = 16 GPUs" in item for item in report["config"]["ignored"])
    single = tmp_path / "lws-size-1.yaml"
    single.write_text(manifest.read_text(encoding="utf-8").replace("size: 2", "size: 1"), encoding="utf-8")
    run, report = check_json(["--gpu", "H100", "--manifest", str(single)])
    assert "nnodes" not in report["config"]["flags"]
    assert finding(report, "parallel-gpu-count")["status"] == "fail"


def test_a_kserve_runtime_with_env_tag_and_a_mounted_model():
    """A ServingRuntime: the model at /mnt/models is what the InferenceService's storageUri
    hf://meta-llama/Llama-3.1-8B-Instruct downloads (kserve docs model-serving/storage/providers/hf:
    hf://${REPO}/${MODEL}:${HASH}), so that id is the model (a preset here); its env sets the backend, the image tag
    pins vLLM 0.11.0."""
    run, report = check_json(["--gpu", "H100", "--manifest", str(MANIFESTS / "kserve-vllm-runtime.yaml")])
    assert run.code in (0, 1), run.err
    config = report["config"]
    assert report["target"]["versions"]["vllm"] == "0.11.0"
    assert config["attention_backend"] == "FLASHINFER" and config["kv_cache_dtype"] == "fp8"
    assert config["model"]["name"] == "llama-3.1-8b" and config["model_missing"] is None
    assert any("the model is meta-llama/Llama-3.1-8B-Instruct" in item for item in config["ignored"])


def test_a_kserve_storage_uri_not_on_the_hub_is_named_not_readable(tmp_path):
    """The same runtime with storageUri pvc://models-pvc/llama (kserve docs model-serving/storage/providers/pvc:
    pvc://${PVC_NAME}/${MODEL_PATH}), then with a hub id whose config is not cached (hf://org/model:revision): the
    first stays the serving machine's /mnt/models, named not readable; the second is looked up as the hub id."""
    text = (MANIFESTS / "kserve-vllm-runtime.yaml").read_text(encoding="utf-8")
    pvc = tmp_path / "pvc.yaml"
    pvc.write_text(text.replace("hf://meta-llama/Llama-3.1-8B-Instruct", "pvc://models-pvc/llama"), encoding="utf-8")
    run, report = check_json(["--gpu", "H100", "--manifest", str(pvc)])
    config = report["config"]
    assert config["model_missing"] == "/mnt/models"
    assert any("storageUri pvc://models-pvc/llama: the model KServe mounts" in item for item in config["ignored"])
    assert finding(report, "general-model-config")["status"] == "warn"
    hub = tmp_path / "hub.yaml"
    hub.write_text(text.replace("meta-llama/Llama-3.1-8B-Instruct", "someone/Some-Model:0a1b2c"), encoding="utf-8")
    run, report = check_json(["--gpu", "H100", "--manifest", str(hub)])
    assert report["config"]["model_missing"] == "someone/Some-Model"
    assert finding(report, "general-model-config")["fix"][0] == "hf download someone/Some-Model config.json"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--container", "x", "--", "vllm", "serve", "m"], "--container names a container of --manifest"),
        (["--manifest", str(MANIFESTS / "vllm-lws.yaml"), "--container", "nope"], "no such container"),
        (["--manifest", str(MANIFESTS / "vllm-lws.yaml"), "--", "vllm", "serve", "m"], "paste none after --"),
        (["--manifest", "/nonexistent/m.yaml"], "no such file"),
    ],
)
def test_bad_container_forms_are_one_line_exit_2(argv, message):
    full = ["check", "--gpu", "H100", *argv]
    run = run_cli(full)
    assert_clean_outcome(run, full)
    assert run.code == 2 and message in run.err


def test_a_plain_check_loads_neither_the_forms_nor_yaml():
    code = (
        "import sys; from attn_preflight.cli import main\n"
        "try:\n main(['check', '--gpu', 'H100', '--model', 'llama-3.1-8b'])\n"
        "except SystemExit: pass\n"
        "print('yaml' in sys.modules, 'attn_preflight.containers' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stderr.strip().splitlines()[-1] == "False False"


def test_a_correction_keeps_the_docker_run_around_it():
    argv = ["--gpu", "H100", "--", "docker", "run", "--gpus", "all", "-p", "8000:8000", "-e",
            "VLLM_ATTENTION_BACKEND=FLASHMLA", "vllm/vllm-openai:v0.14.1", "--model", "llama-3.1-8b"]  # fmt: skip
    run, report = check_json(argv)
    words = shlex.split(report["correction"]["command"])
    assert words[:6] == ["docker", "run", "--gpus", "all", "-p", "8000:8000"]
    assert "VLLM_ATTENTION_BACKEND=FLASHMLA" not in words and "-e" not in words  # dropped, and said so
    assert "drop VLLM_ATTENTION_BACKEND" in report["correction"]["changes"]
    assert words[6:9] == ["vllm/vllm-openai:v0.14.1", "--model", "llama-3.1-8b"]  # no `vllm serve`: the image's
    again = check_json(["--gpu", "H100", "--", *words])[1]
    assert again["verdict"] != "fail"


def test_a_multi_node_line_is_judged_per_node():
    """sglang benchmark/deepseek_v3/README.md, two H200*8 nodes: --tp 16 --nnodes 2 takes 8 GPUs on each node."""
    gpu, tokens = docker_line("--name sglang_multinode1")
    run, report = check_json(["--gpu", gpu, "--", *tokens])
    count = finding(report, "parallel-gpu-count")
    assert count["status"] == "pass" and "over --nnodes 2: 8 per node" in count["message"]
    one_node = [t for t in tokens if t not in ("--nnodes", "2")]
    assert finding(check_json(["--gpu", gpu, "--", *one_node])[1], "parallel-gpu-count")["status"] == "fail"
