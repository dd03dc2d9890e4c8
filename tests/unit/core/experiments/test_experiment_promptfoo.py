"""The promptfoo import: provider ids, prompt files, __expected columns, what is not taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from flarechat.core.experiments.promptfoo import is_promptfoo, load_promptfoo, model_of
from flarechat.core.experiments.spec import ExperimentError


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        (
            "cloudflare-ai:chat:@cf/meta/llama-3.1-8b-instruct-fast",
            "@cf/meta/llama-3.1-8b-instruct-fast",
        ),
        ("openai:chat:@cf/openai/gpt-oss-120b", "@cf/openai/gpt-oss-120b"),
        ("openai:@hf/thebloke/mistral", "@hf/thebloke/mistral"),
        ("openai:chat:gpt-4o-mini", None),
        ("anthropic:messages:claude", None),
        ("cloudflare-ai:chat:", None),
    ],
)
def test_model_of(provider: str, model: str | None) -> None:
    assert model_of(provider) == model


def test_prompt_files_csv_tests_and_expected(tmp_path: Path) -> None:
    (tmp_path / "prompt.txt").write_text("Capital of {{country}}?", encoding="utf-8")
    (tmp_path / "tests.csv").write_text(
        "country,__expected\nFrance,icontains: paris\nPeru,Lima\n", encoding="utf-8"
    )
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: [file://prompt.txt, 'Tell me the capital of {{country}}']\n"
        "providers: [cloudflare-ai:chat:@cf/meta/llama-3.1-8b-instruct-fast]\n"
        "tests: file://tests.csv\n",
        encoding="utf-8",
    )
    assert is_promptfoo(config)
    experiment = load_promptfoo(config)
    assert [v.name for v in experiment.variants] == [
        "llama-3.1-8b-instruct-fast · prompt 1",
        "llama-3.1-8b-instruct-fast · prompt 2",
    ]
    assert experiment.variants[0].prompt == "Capital of {{country}}?"
    france, peru = experiment.cases
    assert [(a.type, a.value) for a in france.asserts] == [("icontains", "paris")]
    assert [(a.type, a.value) for a in peru.asserts] == [("equals", "Lima")]


def test_a_plain_experiment_is_not_taken_for_promptfoo(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("variants: []\ncases: []\n", encoding="utf-8")
    assert not is_promptfoo(path)


def test_vars_lists_and_provider_options_are_named(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "prompts: ['{{a}}']\n"
        "providers:\n"
        "  - id: cloudflare-ai:chat:@cf/meta/llama-3.1-8b-instruct-fast\n"
        "    config: {temperature: 0, apiKey: x}\n"
        "tests:\n"
        "  - vars: {a: [1, 2]}\n"
        "    threshold: 0.5\n",
        encoding="utf-8",
    )
    with pytest.raises(ExperimentError) as caught:
        load_promptfoo(config)
    found = {(p.line, p.field): p.message for p in caught.value.problems}
    assert "provider option 'apiKey' is not supported" in found[(4, "providers[0].config.apiKey")]
    assert "a list of values" in found[(6, "tests[0].vars.a")]
    assert "test 'threshold' is not supported" in found[(7, "tests[0].threshold")]
