"""asyncio imported without ssl at start-up, and TLS given back before the client is built.

Each test runs in a fresh interpreter: the test process imported asyncio (with ssl) long ago.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

#: Starts a plain TCP server that answers a ClientHello with bytes that are not TLS, then tries
#: a TLS connection to it: before give_tls asyncio refuses as on a Python without ssl; after
#: it, the TLS machinery runs and OpenSSL rejects the answer (an ssl.SSLError).
_PROBE = textwrap.dedent(
    """
    import json, sys
    from flarechat.ui.shared import deferred_tls

    deferred_tls.import_asyncio()
    import asyncio
    from asyncio import base_events, selector_events, sslproto

    result = {
        "ssl_loaded_after_import": "ssl" in sys.modules,
        "bound_before": [m.ssl is not None for m in (base_events, selector_events, sslproto)],
        "ready_before": deferred_tls.tls_ready(),
    }

    async def garbage(reader, writer):
        await reader.read(1)
        writer.write(b"HTTP/1.1 400 Bad Request\\r\\n\\r\\n" * 4)
        await writer.drain()
        writer.close()

    async def attempt():
        import ssl as ssl_module

        server = await asyncio.start_server(garbage, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        context = ssl_module.create_default_context()
        try:
            await asyncio.open_connection("127.0.0.1", port, ssl=context,
                                          server_hostname="localhost")
        except Exception as error:
            return type(error).__name__, isinstance(error, ssl_module.SSLError), str(error)
        finally:
            server.close()
        return "connected", False, ""

    result["before"] = asyncio.run(attempt())
    deferred_tls.give_tls()
    deferred_tls.give_tls()  # idempotent
    import ssl
    result["bound_after"] = [m.ssl is ssl for m in (base_events, selector_events, sslproto)]
    result["again_errors"] = sslproto.SSLAgainErrors == (ssl.SSLWantReadError, ssl.SSLSyscallError)
    result["ready_after"] = deferred_tls.tls_ready()
    result["after"] = asyncio.run(attempt())
    print(json.dumps(result))
    """
)


def _probe(code: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    result: dict[str, object] = json.loads(out.splitlines()[-1])
    return result


def test_asyncio_imports_without_ssl_and_gets_tls_back() -> None:
    result = _probe(_PROBE)
    assert result["ssl_loaded_after_import"] is False
    assert result["bound_before"] == [False, False, False]
    assert result["ready_before"] is False
    before = result["before"]
    assert isinstance(before, list)
    name, is_ssl_error, text = before
    assert (name, is_ssl_error) == ("RuntimeError", False)
    assert "ssl" in text.lower()
    assert result["bound_after"] == [True, True, True]
    assert result["again_errors"] is True
    assert result["ready_after"] is True
    after = result["after"]
    assert isinstance(after, list)
    name, is_ssl_error, _text = after
    assert is_ssl_error, name  # the handshake ran and OpenSSL rejected the plain-HTTP answer


def test_import_asyncio_leaves_an_imported_ssl_alone() -> None:
    code = textwrap.dedent(
        """
        import json, ssl, sys
        from flarechat.ui.shared import deferred_tls
        deferred_tls.import_asyncio()
        from asyncio import base_events
        print(json.dumps([base_events.ssl is ssl, deferred_tls.tls_ready()]))
        """
    )
    assert _probe(code) == [True, True]  # type: ignore[comparison-overlap]


def test_the_client_builder_gives_asyncio_tls_first() -> None:
    code = textwrap.dedent(
        """
        import json
        from flarechat.ui.shared import deferred_tls
        deferred_tls.import_asyncio()
        from flarechat.ui import lazy_client
        before = deferred_tls.tls_ready()
        client = lazy_client._build()
        print(json.dumps([before, deferred_tls.tls_ready()]))
        """
    )
    assert _probe(code) == [False, True]  # type: ignore[comparison-overlap]
