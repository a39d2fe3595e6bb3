"""The examples of the cloudraker-milliseconds 0.2.2 README, run against this server.

Prints one JSON line per example: {"name", "ok", "detail"}. MS_API_KEY and MS_BASE_URL come
from the environment; MS_LIMITED_KEY is a key of its own for the rate-limit example.
"""

import asyncio
import base64
import json
import os
import traceback
from typing import Final, Literal, Mapping, TypedDict

import httpx
from milliseconds import (
    AsyncDecisionMachine,
    DecisionMachine,
    InvalidRequestError,
    MillisecondsError,
    RateLimitError,
    Tree,
)

BASE_URL = os.environ["MS_BASE_URL"]

Intent = Literal["billing", "shipping", "account"]

LABELS: Final[Mapping[Intent, str]] = {
    "billing": "payments, invoices, charges and refunds",
    "shipping": "delivery, tracking and packages",
    "account": "login, passwords and profile settings",
}

TAXONOMY: Final[Tree] = {
    "billing": {
        "description": "payments, invoices, charges, refunds and subscriptions",
        "labels": {
            "refund_request": "the customer asks for money back",
            "subscription_change": "the customer wants to upgrade or cancel a plan",
        },
    },
    "shipping": "delivery, tracking, lost or damaged parcels",
}


class Invoice(TypedDict):
    invoice_number: str | None
    total: float | None
    currency: Literal["USD", "EUR"] | None


dm = DecisionMachine(base_url=BASE_URL)


def check(name, fn):
    try:
        detail = fn()
        print(json.dumps({"name": name, "ok": True, "detail": detail}, default=str), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
        print(json.dumps({"name": name, "ok": False, "detail": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-800:]}), flush=True)


def classify():
    r = dm.classify("I was charged twice.", LABELS)
    assert r.label in LABELS and set(r.scores) == set(LABELS), r
    assert isinstance(r.probability, float) and isinstance(r.confidence, float)
    return {"label": r.label, "probability": r.probability}


def yes_no():
    s = dm.yes_no("Fix this today.", "The customer expresses urgency.", when_true="Time pressure, ASAP, losing money")
    assert isinstance(s.answer, bool) and 0 <= s.probability <= 1
    return {"answer": s.answer, "probability": s.probability}


def classify_tree():
    tree = dm.classify_tree(
        "I want my money back.",
        {
            "billing": {
                "description": "payments, invoices, charges, refunds and subscriptions",
                "labels": {
                    "refund_request": "the customer asks for money back",
                    "subscription_change": "the customer wants to upgrade or cancel a plan",
                },
            },
            "shipping": "delivery, tracking, lost or damaged parcels",
        },
    )
    assert tree.path and tree.label == tree.path[-1] and len(tree.levels) == len(tree.path)
    return {"path": list(tree.path)}


def rate():
    mood = dm.rate("I am done with this company.", ["Calm", "Annoyed", "Angry", "Threatening to leave"])
    assert 0 <= mood.score <= 3 and 0 <= mood.level <= 3
    return {"score": mood.score, "level": mood.level}


def answer():
    who = dm.answer("Apple announced the M5 today.", "Who announced the product?")
    assert who.span is not None, who
    start, end = who.span
    return {"answer": who.answer, "span": [start, end]}


def entities():
    people = dm.entities("Ada met Grace in Paris.", {"person": "a human name", "place": "a city"})
    return {"entities": [(e.type, e.text) for e in people]}


def verify():
    c = dm.verify("Invoice 4471, total 120.00 EUR.", "invoice_number", 4471)
    assert isinstance(c.matches, bool)
    return {"matches": c.matches, "found": list(c.found)}


def annotated_tree():
    walked = dm.classify_tree("I want my money back.", TAXONOMY)
    return {"label": walked.label}


def batch_classify():
    tickets = ["I was charged twice.", "Where is my parcel?"]
    many = dm.classify(tickets, LABELS)
    assert len(many) == 2 and many.usage.input_tokens > 0
    return {"labels": [m.label for m in many], "input_tokens": many.usage.input_tokens}


def batch_grid():
    tickets = ["I was charged twice.", "Where is my parcel?"]
    grid = dm.yes_no(tickets, ["The text mentions a price.", "The customer is angry."])
    assert len(grid) == 2 and len(grid[0]) == 2 and isinstance(grid[0][1].answer, bool)
    return {"grid": [[c.answer for c in row] for row in grid]}


def extract_typed_dict():
    data = dm.extract("Invoice 4471, total 120.00 EUR.", Invoice)
    assert set(data) == {"invoice_number", "total", "currency"}, data
    return data


def extract_dict_with_descriptions():
    schema = {
        "type": "object",
        "properties": {
            "invoice_number": {"description": "the identifier printed on the invoice"},
            "total": {"type": "number", "description": "the amount due including tax"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    invoice = dm.extract("Invoice 4471, total 120.00 EUR.", schema)
    assert set(invoice) == {"invoice_number", "total", "tags"}, invoice
    return invoice


def usage():
    r = dm.classify("I was charged twice.", LABELS)
    u = r.usage
    assert u.input_chars > 0 and u.input_tokens > 0 and u.inference_ms > 0, u
    assert u.headers["x-input-tokens"] == str(u.input_tokens)
    limits = u.rate_limit
    assert limits is not None, "no x-ratelimit-* headers"
    assert limits.limit_requests > 0 and limits.reset_requests.endswith("s") and limits.limit_tokens > 0
    return {"inference_ms": u.inference_ms, "remaining_requests": limits.remaining_requests, "reset_requests": limits.reset_requests, "remaining_tokens": limits.remaining_tokens}


def errors_client_side():
    try:
        dm.classify("I was charged twice.", ["billing"])
    except InvalidRequestError as e:
        assert e.code == "client_error" and e.status == 0
        return {"code": e.code, "api_message": e.api_message}
    raise AssertionError("no client_error")


def rate_limited():
    key = os.environ["MS_LIMITED_KEY"]
    # Spend the key's minute with counted items (each text counts one; the body is refused with 400).
    for _ in range(10):
        spent = httpx.post(f"{BASE_URL}/v1/decision-machine-1/classify", json={"texts": ["a"] * 30}, headers={"authorization": f"Bearer {key}"})
        if spent.status_code == 429:
            break
    limited = DecisionMachine(api_key=key, base_url=BASE_URL, max_retries=0)
    try:
        limited.classify("I was charged twice.", LABELS)
    except RateLimitError as e:
        assert e.code == "rate_limit_exceeded" and e.status == 429 and e.retryable
        assert e.retry_after is not None and 0 < e.retry_after <= 60
        return {"code": e.code, "retry_after": e.retry_after}
    raise AssertionError("the spent key was answered")


def post_raw():
    raw = dm.post("/v1/decision-machine-1/classify", {"text": "hi", "labels": ["a", "b"]})
    assert raw["label"] in ("a", "b")
    return raw


def async_client():
    async def main():
        async with AsyncDecisionMachine(base_url=BASE_URL) as adm:
            r = await adm.classify("I was charged twice.", LABELS)
            return r.label

    return {"label": asyncio.run(main())}


def image_refused():
    receipt = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
        "hQGAhKmMIQAAAABJRU5ErkJggg=="
    )
    try:
        dm.classify(receipt, {"receipt": "a till receipt", "invoice": "a supplier invoice"})
    except InvalidRequestError as e:
        assert e.status == 400 and "images are not supported by this deployment" in e.api_message, e.api_message
        return {"status": e.status, "api_message": e.api_message}
    raise AssertionError("an image was answered")


EXAMPLES = [
    classify, yes_no, classify_tree, rate, answer, entities, verify, annotated_tree, batch_classify, batch_grid,
    extract_typed_dict, extract_dict_with_descriptions, usage, errors_client_side, rate_limited,
    post_raw, async_client, image_refused,
]

for example in EXAMPLES:
    check(example.__name__, example)
