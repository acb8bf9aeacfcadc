#!/usr/bin/env python3
"""tlsio.py - a scripted TLS client for tests/server/test_tls.sh (and
test_tls_memory.sh).

Usage: python3 tlsio.py PORT CA OUT STEP...

Connects to 127.0.0.1:PORT over TLS (trusting the CA file CA, checking the
name localhost), runs the steps in order, writes every byte received to
OUT, and prints how the connection ended:

  notify    the server sent close_notify (a clean TLS close)
  eof       the TCP connection ended without close_notify
  reset     the connection was reset
  timeout   nothing more came for 10 s
  open      the steps ended with the connection still open

Steps:
  send:TEXT     send TEXT (\\r and \\n are escapes) in one write
  sendfile:F    send the bytes of file F in one write
  flood:F       send file F over and over without reading, until the server
                stops taking it for 2 s (a client that does not read)
  until:RE      read until what was received matches the regular expression
  wait:F        wait until file F exists
  mark:F        create file F (tells the test this step was reached)
  cert:F        write the server's certificate (PEM) to F
  end           read until the connection ends
"""
import os
import re
import socket
import ssl
import sys
import time


def unescape(text):
    return text.replace("\\r", "\r").replace("\\n", "\n").encode()


def wait_file(path):
    limit = time.monotonic() + 30
    while not os.path.exists(path):
        if time.monotonic() > limit:
            raise TimeoutError("no " + path)
        time.sleep(0.02)


def flood(sock, data):
    """Writes data again and again; stops when a write blocks for 2 s."""
    sock.settimeout(2)
    try:
        while True:
            sock.sendall(data)
    except (socket.timeout, ssl.SSLWantWriteError):
        pass
    finally:
        sock.settimeout(10)


def cert_of(sock):
    return ssl.DER_cert_to_PEM_cert(sock.getpeercert(binary_form=True))


def main():
    port, ca, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    ctx = ssl.create_default_context(cafile=ca)
    # An end without close_notify must not pass for one (Python hides it by
    # default: suppress_ragged_eofs).
    sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                           server_hostname="localhost", suppress_ragged_eofs=False)
    got = bytearray()
    end = "open"
    try:
        for step in sys.argv[4:]:
            kind, _, arg = step.partition(":")
            if kind == "send":
                sock.sendall(unescape(arg))
            elif kind == "sendfile":
                with open(arg, "rb") as f:
                    sock.sendall(f.read())
            elif kind == "flood":
                with open(arg, "rb") as f:
                    flood(sock, f.read())
            elif kind == "until":
                pattern = re.compile(arg.encode(), re.S)
                while not pattern.search(got):
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise EOFError
                    got += chunk
            elif kind == "wait":
                wait_file(arg)
            elif kind == "mark":
                open(arg, "w").close()
            elif kind == "cert":
                with open(arg, "w") as f:
                    f.write(cert_of(sock))
            elif kind == "end":
                while True:
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise EOFError
                    got += chunk
            else:
                sys.exit("tlsio.py: unknown step " + step)
    except EOFError:
        end = "notify"
    except ssl.SSLEOFError:
        end = "eof"
    except (ConnectionResetError, BrokenPipeError):
        end = "reset"
    except socket.timeout:
        end = "timeout"
    with open(out, "wb") as f:
        f.write(got)
    print(end)


if __name__ == "__main__":
    main()
