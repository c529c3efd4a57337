"""`etude train --init`: continued pretraining of a loaded checkpoint with its own tokenizer
(packed JSONL documents), whose first loss is the loaded model's loss, which resumes from
its DCP checkpoint with the same losses, and which `etude export --hf` writes out for
transformers with the trained weights."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hf_tiny import VOCAB, save_tiny, tiny_tokenizer, write_jsonl

from etude.cli import main as etude_main
from etude.models import load_pretrained
from etude.parallel.data import global_batch, token_corpus
from etude.parallel.export import from_training_checkpoint
from etude.parallel.train import TrainConfig, iter_log, train

pytestmark = pytest.mark.slow
STEPS, BATCH, SEQ = 4, 4, 16


def config(tmp: Path, init: Path, data: Path, out: str) -> TrainConfig:
    return TrainConfig(
        init=str(init),
        data=[str(data)],
        steps=STEPS,
        batch_size=BATCH,
        seq_len=SEQ,
        lr=0.01,
        adamw_lr=1e-3,
        checkpoint_every=2,
        out=str(tmp / out),
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("init")
    save_tiny("deepseek_v3", tmp / "hf")
    data = write_jsonl(tmp / "docs.jsonl")
    records = train(config(tmp, tmp / "hf", data, "full"))
    return tmp, data, records


def test_packed_corpus_is_documents_with_eos_between():
    tok = tiny_tokenizer()
    stream = token_corpus(tok, None, max_bytes=1 << 14)  # the stdlib default
    assert stream.dtype == torch.int64 and (stream == tok.eos_token_id).sum() >= 1


def test_first_loss_is_the_loaded_models_loss(run):
    tmp, data, records = run
    assert [r["step"] for r in records] == list(range(1, STEPS + 1))
    model, tok = load_pretrained(tmp / "hf")
    batch = global_batch(token_corpus(tok, [data]), 0, BATCH, SEQ, seed=0)
    with torch.no_grad():
        logits = model(batch[:, :-1])
    want = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten()).item()
    assert records[0]["loss"] == pytest.approx(want, abs=1e-5)


def test_resumed_run_repeats_the_losses(run):
    tmp, data, records = run
    cfg = config(tmp, tmp / "hf", data, "resumed")
    train(cfg, stop_after=2)
    resumed = train(cfg, resume=True)
    assert [r["step"] for r in resumed] == [3, 4]
    for a, b in zip(resumed, records[2:]):
        assert a["loss"] == pytest.approx(b["loss"], abs=1e-6)
    assert [r["step"] for r in iter_log(tmp / "resumed" / "log.jsonl")] == [1, 2, 3, 4]


def test_export_writes_the_trained_weights_for_transformers(run):
    from transformers import AutoModelForCausalLM

    tmp, _, _ = run
    step = tmp / "full" / "checkpoints" / f"step_{STEPS}"
    out = tmp / "exported"
    assert etude_main(["export", "--hf", str(out), str(step)]) == 0
    trained, _ = from_training_checkpoint(step)
    original, _ = load_pretrained(tmp / "hf")
    moved = trained.layers[0].attention.wkv_b.weight - original.layers[0].attention.wkv_b.weight
    assert moved.abs().max() > 0  # training changed the weights that were exported
    hf = AutoModelForCausalLM.from_pretrained(out).eval()
    tokens = torch.randint(0, VOCAB, (2, 9), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        err = (hf(tokens).logits - trained(tokens)).abs().max() / hf(tokens).logits.abs().max()
    assert err <= 1e-4


def test_bad_init_input_is_a_named_error(tmp_path, capsys):
    toml = tmp_path / "t.toml"
    toml.write_text(f'[train]\nsteps = 1\nout = "{tmp_path / "run"}"\n')
    rc = etude_main(["train", "--config", str(toml), "--init", str(tmp_path / "nope")])
    assert rc == 2 and "does not exist" in capsys.readouterr().err
    rc = etude_main(["train", "--config", str(toml), "--data", str(tmp_path / "x.txt")])
    assert rc == 2 and "--data needs --init" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "no text field"}\n')
    save_tiny("llama", tmp_path / "hf")
    rc = etude_main(
        ["train", "--config", str(toml), "--init", str(tmp_path / "hf"), "--data", str(bad)]
    )
    assert rc == 2 and "bad.jsonl:1: a JSONL record needs a string field 'text'" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "run" / "log.jsonl").exists()
