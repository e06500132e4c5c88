"""Encoder, δ^VL, projection and cache tests. The transformers paths use tiny randomly
initialised CLIP and SigLIP models built and saved here; nothing is downloaded."""

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from primebench_tasks.embed.projection import vision_dependence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


# every test below needs the embed extra (torch, transformers): the torch-free ones are in
# tests/embed/test_projection_and_import.py, which this skip does not hide
torch = pytest.importorskip("torch", reason="needs the 'embed' extra: pip install -e '.[embed]'")
pytestmark = pytest.mark.heavy


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    lines = [
        f"question {i} how many digits are in the figure answer {i * 7} options A B C D"
        for i in range(200)
    ]
    tr = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(lines, tr)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory):
    from transformers import (
        CLIPConfig,
        CLIPImageProcessor,
        CLIPModel,
        CLIPProcessor,
        SiglipConfig,
        SiglipImageProcessor,
        SiglipModel,
        SiglipProcessor,
    )

    root = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    t = _tokenizer()
    small = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
    CLIPModel(
        CLIPConfig(
            text_config=dict(
                vocab_size=len(t),
                max_position_embeddings=64,
                pad_token_id=0,
                bos_token_id=1,
                eos_token_id=2,
                **small,
            ),
            vision_config=dict(image_size=32, patch_size=8, **small),
            projection_dim=16,
        )
    ).save_pretrained(root / "clip")
    CLIPProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
        ),
        tokenizer=t,
    ).save_pretrained(root / "clip")
    SiglipModel(
        SiglipConfig(
            text_config=dict(vocab_size=len(t), max_position_embeddings=64, **small),
            vision_config=dict(image_size=32, patch_size=8, **small),
        )
    ).save_pretrained(root / "siglip")
    SiglipProcessor(
        image_processor=SiglipImageProcessor(size={"height": 32, "width": 32}), tokenizer=t
    ).save_pretrained(root / "siglip")
    return root


@pytest.mark.heavy
@pytest.mark.parametrize("name, dim", [("clip", 16), ("siglip", 32)])
def test_hf_dual_encoders(tiny_models, name, dim):
    from PIL import Image

    from primebench_tasks.embed.encoders import build_encoder

    enc = build_encoder(f"hf:{tiny_models / name}")
    assert enc.id.startswith(f"hf:{name}-")
    t = enc.encode_text(["how many digits", "question 3"])
    assert t.shape == (2, dim) and t.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(t, axis=1), 1.0, rtol=1e-5)
    v = enc.encode_vl(["how many digits", "question 3"], [Image.new("RGB", (40, 30), "red"), None])
    assert np.isfinite(v[0]).all() and np.isnan(v[1]).all()
    d = vision_dependence(t, v)
    assert 0 < d[0] < 2 and d[1] == 0


@pytest.mark.heavy
def test_minilm_and_concat(tiny_models):
    from PIL import Image

    from primebench_tasks.embed.encoders import TextOnlyError, build_encoder

    m = build_encoder("minilm")
    e = m.encode_text(["How many digits?", "How many numbers can you find?", "Paris is in"])
    assert e.shape == (3, 384)
    assert e[0] @ e[1] > e[0] @ e[2]  # a real sentence embedder, not noise
    with pytest.raises(TextOnlyError):
        m.encode_vl(["x"], [None])
    c = build_encoder(f"concat:minilm+hf:{tiny_models / 'clip'}")
    v = c.encode_vl(["a", "b"], [None, Image.new("RGB", (20, 20))])
    assert v.shape == (2, 384 + 16) and (v[0, 384:] == 0).all() and (v[1, 384:] != 0).any()
    with pytest.raises(FileNotFoundError):
        build_encoder("hf:/nonexistent/model")


def _mathvision_copy(tmp_path):
    from primebench_tasks.data.defaults import default_path

    dst = tmp_path / "mv"
    shutil.copytree(default_path("mathvision"), dst)
    return dst


@pytest.mark.heavy
def test_embed_mathvision_vl_path_end_to_end(tiny_models, tmp_path, capsys):
    """Real MATH-Vision testmini images through the transformers VL path (a tiny local CLIP)."""
    from primebench_tasks.cli import main
    from primebench_tasks.data.panel import Panel

    root = _mathvision_copy(tmp_path)
    (root / "images" / "5.jpg").write_bytes(b"not an image")  # one bad image must not abort
    enc = f"hf:{tiny_models / 'clip'}"
    assert main(["embed", "--panel", str(root), "--encoder", enc, "--space", "text"]) == 0
    assert main(["embed", "--panel", str(root), "--encoder", enc, "--space", "vl"]) == 0
    out = capsys.readouterr().out
    assert "1 item(s) failed" in out and "MATH-Vision_MINI/5" in out
    p = Panel.load(root)
    assert p.embedding_spaces == ["text", "vl"]
    v, has = p.embeddings("MATH-Vision_MINI", "vl")
    assert has.sum() == 303 and v.shape[1] == 16
    # the cache makes a second run encode only the failed item again (and report it again)
    assert main(["embed", "--panel", str(root), "--encoder", enc, "--space", "vl"]) == 0
    out = capsys.readouterr().out
    assert "303 from cache, 1 encoded" in out and "1 item(s) failed" in out
    # a changed item is re-encoded
    from primebench_tasks.data.panel import data_dir

    items = pd.read_parquet(data_dir(root) / "items.parquet")
    items.loc[0, "question"] = "changed question"
    items.to_parquet(data_dir(root) / "items.parquet", index=False)
    meta = json.loads((root / "panel.json").read_text())
    meta.pop("content_hash")
    (root / "panel.json").write_text(json.dumps(meta))
    assert main(["embed", "--panel", str(root), "--encoder", enc, "--space", "text"]) == 0
    assert "303 from cache, 1 encoded" in capsys.readouterr().out
    # the pipeline uses the vl cells and δ
    from primebench_tasks.pipeline.primebench import PipelineParams, run_pipeline

    res = run_pipeline(Panel.load(root), PipelineParams(selector="vaw", top_share=0.0))
    assert res.params.as_dict(Panel.load(root))["cell_space"] == "vl"
    assert res.stage2.table["cells"].iloc[0] == 100


@pytest.mark.heavy
def test_resume_after_interruption(tmp_path, tiny_models):
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.embed.cache import embed_panel
    from primebench_tasks.embed.encoders import build_encoder

    root = _mathvision_copy(tmp_path)
    enc = build_encoder(f"hf:{tiny_models / 'siglip'}")
    calls = {"n": 0}
    real = enc.encode_text

    def flaky(texts):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(texts)

    enc.encode_text = flaky
    with pytest.raises(KeyboardInterrupt):
        embed_panel(Panel.load(root), root, enc, "text", batch=50)
    enc.encode_text = real
    _, rep = embed_panel(Panel.load(root), root, enc, "text", batch=50)
    assert rep.n_cached == 100 and rep.n_encoded == 204


@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory):
    """A tiny random LLaVA (Llama text model + CLIP vision tower) with a chat template: the
    causal-VLM embedder path (last-token pooling, instruction prefix)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        CLIPImageProcessor,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    out = tmp_path_factory.mktemp("llava")
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        [f"system user question {i} how many digits answer {i * 7}" for i in range(300)],
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<pad>", "<s>", "</s>", "<image>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    chat = (
        "{% for message in messages %}{{ message['role'] }}: {% for c in message['content'] %}"
        "{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}"
        "{% endfor %}</s>{% endfor %}"
    )
    t = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        chat_template=chat,
        extra_special_tokens={"image_token": "<image>"},
    )
    torch.manual_seed(0)
    LlavaForConditionalGeneration(
        LlavaConfig(
            text_config=dict(
                model_type="llama",
                vocab_size=len(t),
                hidden_size=64,
                intermediate_size=128,
                num_hidden_layers=2,
                num_attention_heads=2,
                num_key_value_heads=2,
                pad_token_id=0,
                bos_token_id=1,
                eos_token_id=2,
            ),
            vision_config=dict(
                model_type="clip_vision_model",
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                image_size=56,
                patch_size=14,
            ),
            image_token_id=t.convert_tokens_to_ids("<image>"),
            vision_feature_layer=-1,
            vision_feature_select_strategy="default",
        )
    ).save_pretrained(out)
    LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": 56}, crop_size={"height": 56, "width": 56}
        ),
        tokenizer=t,
        patch_size=14,
        num_additional_image_tokens=1,
        vision_feature_select_strategy="default",
        chat_template=chat,
        image_token="<image>",
    ).save_pretrained(out)
    return out


@pytest.mark.heavy
def test_causal_vlm_embedder(tiny_llava):
    from PIL import Image

    from primebench_tasks.embed.encoders import HFCausalEmbedder, build_encoder

    enc = build_encoder(f"hf:{tiny_llava}")
    assert isinstance(enc, HFCausalEmbedder) and enc.id.startswith("hf-causal:")
    t = enc.encode_text(["how many digits", "question 3"])
    np.testing.assert_allclose(np.linalg.norm(t, axis=1), 1.0, rtol=1e-5)
    v = enc.encode_vl(["how many digits", "question 3"], [Image.new("RGB", (64, 48), "red"), None])
    assert v.shape == t.shape and np.isnan(v[1]).all()
    d = vision_dependence(t, v)
    assert d[0] > 0 and d[1] == 0  # the image moves the embedding
