"""Schemathesis hooks for scripts/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

A few of the gateway's rules hold between fields or depend on arithmetic, and OpenAPI 3.0 has no
words for them, so the document cannot state them and a generator that follows the document
draws requests that break them:

- chat completions: the prompt is the text of the *last* user message (a rule of position);
- picgen `size`: `<width>x<height>` within the model's pixel area and a ratio from 1:16 to 16:1;
- motion: `size` and `resolution`, when both are given, must name the same tier;
- the Vid-H3 list's `after` cursor names an existing video of the caller's;
- Vid-H3 (`/v1/videos`): `size`, `resolution` and `metadata.resolution`, where given, must agree;
  a frame given in several fields must be the same; a last frame needs a first; frames and
  reference media do not mix; reference media counted by type; text from `prompt` or one text item.

And one rule of every JSON body: no key named `__proto__` or `constructor`, at any depth (the
prototype-poisoning guard of fastify's JSON parser refuses them, 400 naming `body`); OpenAPI 3.0
has no `propertyNames` to say so, so `filter_body` below keeps such bodies out of generation.

For exactly those operations schemathesis.toml turns the built-in positive_data_acceptance
(ST202) off, and the check below takes its place: it is the same check, except that a 400 naming
one of these rules, by its field and its words, is an expected answer to schema-valid data. Any
other refusal of schema-valid data is still a failure. The rules themselves are not restated
here: each has its own end-to-end tests (test/families/...), and the gateway's words are matched.
"""

from __future__ import annotations

import json
import re

import schemathesis
from schemathesis.openapi.checks import RejectedPositiveData

# A picgen <width>x<height> the document's pattern takes, refused for its ratio or its area.
SIZE_ARITHMETIC = re.compile(r"(aspect ratio \d+:\d+ is outside 1:16 to 16:1|\d+x\d+ has \d+ pixels; \S+ takes \d+ to \d+)$")

# operationId -> the refusals (field, words) that name a rule the document cannot state.
RULES_BEYOND_THE_DOCUMENT: dict[str, list[tuple[re.Pattern[str], re.Pattern[str]]]] = {
    "postV1ChatCompletions": [
        (re.compile(r"^messages\.\d+\.content$"), re.compile(r"the user message must carry the prompt text$")),
        (re.compile(r"^messages$"), re.compile(r"needs a user message carrying the prompt$")),
    ],
    "postV1ImagesGenerations": [(re.compile(r"^size$"), SIZE_ARITHMETIC)],
    "postV1ImagesEdits": [(re.compile(r"^size$"), SIZE_ARITHMETIC)],
    "postVendorApiV1ServicesAigcVideoGenerationVideoSynthesis": [(re.compile(r"^resolution$"), re.compile(r"conflicts with size \(\w+\); give one of them$"))],
    "postV1Videos": [
        (re.compile(r"^(size|resolution|metadata\.resolution)$"), re.compile(r"conflicts with [\w.]+ \w+; give the resolution once$")),
        (re.compile(r"^(image|images)$"), re.compile(r"frame \([^)]*\) is given more than once with different values; give it once$")),
        (re.compile(r"^metadata\.last_frame_image$"), re.compile(r"a last frame needs a first frame$")),
        (re.compile(r"^metadata\.content$"), re.compile(r"(at most one text item|frame images cannot be mixed with reference media; use either frames or metadata\.content references|at most \d+ (images|videos|audio references), got \d+)$")),
        (re.compile(r"^prompt$"), re.compile(r"every request needs text: a non-empty prompt or a text item in metadata\.content$")),
    ],
    # A cursor names an existing video of the caller's; any string is one by the document.
    "getV1Videos": [(re.compile(r"^after$"), re.compile(r"no video \S+$"))],
    "postVendorApiV1ServicesAigcImage2videoVideoSynthesis": [(re.compile(r"^resolution$"), re.compile(r"conflicts with size \(\w+\); give one of them$"))],
}

# What positive_data_acceptance expects by default (schemathesis's own list).
EXPECTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]


def _expected(status: int) -> bool:
    return 200 <= status < 400 or status in (401, 403, 404, 409, 429) or status >= 500


def _names_a_rule(operation_id: str, response) -> bool:
    """A 400 whose error names one of the operation's rules beyond the document, in its words."""
    if response.status_code != 400:
        return False
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False
    param, message = error.get("param"), error.get("message")
    if not isinstance(param, str) or not isinstance(message, str):
        return False
    return any(field.search(param) and words.search(message) for field, words in RULES_BEYOND_THE_DOCUMENT[operation_id])


# The keys fastify's JSON parser refuses (secure-json-parse, onProtoPoisoning / onConstructorPoisoning).
RESERVED_KEYS = frozenset({"__proto__", "constructor"})


def _has_reserved_key(value) -> bool:
    if isinstance(value, dict):
        return any(key in RESERVED_KEYS or _has_reserved_key(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_reserved_key(item) for item in value)
    return False


@schemathesis.hook
def filter_body(ctx, body):
    return not _has_reserved_key(body)


@schemathesis.check
def positive_data_acceptance_beyond_the_document(ctx, response, case):
    operation_id = case.operation.definition.raw.get("operationId")
    if operation_id not in RULES_BEYOND_THE_DOCUMENT:
        return None  # the built-in check covers every other operation
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or _expected(response.status_code):
        return None
    if _names_a_rule(operation_id, response):
        return None
    raise RejectedPositiveData(
        operation=case.operation.label,
        message=f"Valid data should have been accepted\nExpected: {', '.join(EXPECTED)}",
        status_code=response.status_code,
        allowed_statuses=EXPECTED,
    )
