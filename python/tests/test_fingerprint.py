"""A message's fingerprint tells a result from an error of the same id: the SDK synthesizes an error
for a call whose stream ended without its answer ("SSE stream ended without a response"), and that
error must not make the result the app's dedup dropped look delivered (found by the corpus's
Python-client cells: `dedup_loss` then rested on the dropped progress events alone)."""

from forkwatch_instrumentation.client.state import fingerprint, fingerprint_of_data


def test_result_and_error_of_one_id_differ() -> None:
    result = {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}
    error = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "SSE stream ended without a response"}}
    assert fingerprint(result) != fingerprint(error)


def test_the_same_answer_on_the_wire_and_decoded_matches() -> None:
    data = '{"jsonrpc":"2.0","id":3,"result":{"content":[]}}'
    assert fingerprint_of_data(data) == fingerprint({"jsonrpc": "2.0", "id": 3, "result": {"content": []}})
    err = '{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}'
    decoded = {"jsonrpc": "2.0", "id": "a", "error": {"code": -32601, "message": "no"}}
    assert fingerprint_of_data(err) == fingerprint(decoded)
