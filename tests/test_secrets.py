"""Secrets stay out: credentials in an endpoint URL and a key pasted where a variable's name belongs
reach no identity, result or error line."""

from __future__ import annotations

import pytest

from maeb.core.errors import MaebError
from maeb.encoders import ModelMeta, load_encoder

# item 10: secrets

SECRET_URL = "http://alice:hunter2pass@127.0.0.1:9/v1?api_key=SEKRET123&region=eu"


def test_credentials_in_an_endpoint_url_stay_out_of_identities_results_and_error_lines():
    from maeb.core.identity import declared_identity, experiment_settings, redact_url
    from maeb.encoders.chat import ChatError, chat

    assert redact_url(SECRET_URL) == "http://127.0.0.1:9/v1?api_key=REDACTED&region=eu"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"  # unchanged: old cache keys stay valid
    meta = ModelMeta(name="me/api", family="gen-openai-chat", revision="none", modalities=("audio", "text"))
    encoder = load_encoder(meta, base_url=SECRET_URL, model="m", retries=0, budget=2.0, timeout=1.0)
    written = [
        str(encoder.config()),
        str(declared_identity(meta, {"base_url": SECRET_URL}, "mteb-2.26")),
        str(experiment_settings(meta, {"base_url": SECRET_URL}, "mteb-2.26", "mteb-2.26")),
        str(meta.to_mteb({"base_url": SECRET_URL})),
    ]
    with pytest.raises(ChatError) as told:
        chat(encoder.endpoint, [{"role": "user", "content": "hi"}])
    written.append(str(told.value))
    for text in written:
        assert "hunter2pass" not in text and "SEKRET123" not in text and "alice" not in text, text
    assert "127.0.0.1:9" in written[-1]


@pytest.mark.parametrize("pasted", ["sk-proj-abcDEF1234567890abcdef", "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3", "abc def"])
def test_a_key_pasted_as_api_key_env_is_refused_without_repeating_it(pasted):
    from maeb.cli.common import option_pairs

    with pytest.raises(MaebError) as told:
        option_pairs([("api_key_env", pasted)])
    assert pasted not in str(told.value) and "NAME of the environment variable" in str(told.value)
    meta = ModelMeta(name="me/api", family="gen-openai-chat", revision="none", modalities=("audio", "text"))
    with pytest.raises(MaebError, match="looks like a secret key"):
        load_encoder(meta, base_url="http://127.0.0.1:9/v1", api_key_env=pasted)
    assert option_pairs([("api_key_env", "MY_SERVER_KEY")]) == {"api_key_env": "MY_SERVER_KEY"}
