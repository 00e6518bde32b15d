#!/usr/bin/env python3
"""N cold TCP flows carrying BYTES, delivered (bound23, issue 23).

    bench/tcpfloor.py serve ADDR PORT
    bench/tcpfloor.py send ADDR PORT STREAMS BYTES

The floor a copy of BYTES over STREAMS TCP connections cannot beat on a
path: plain TCP, no SSH, no files.  `send` opens STREAMS connections at
once (one thread each), writes BYTES / STREAMS bytes on each (the
remainder on the first), shuts each down for writing and waits until the
server closes it, which `serve` does only after it has read everything:
the client exits once every byte has reached the server process.  (iperf3
-n cannot serve here: its count is of bytes written into the client's
socket buffers, and its server resets the data connections at the end of
the test with bytes still in flight.)  `serve` handles any number of
connections at a time, until killed.
"""
import socket
import socketserver
import sys
import threading

CHUNK = 256 * 1024


class Drain(socketserver.BaseRequestHandler):
    def handle(self):
        buf = bytearray(CHUNK)
        while self.request.recv_into(buf):
            pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def send_one(addr, port, n, errs):
    try:
        zero = memoryview(bytes(CHUNK))
        with socket.create_connection((addr, port)) as s:
            while n > 0:
                k = min(n, CHUNK)
                s.sendall(zero[:k])
                n -= k
            s.shutdown(socket.SHUT_WR)
            while s.recv(4096):
                pass
    except OSError as e:
        errs.append(str(e))


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == 'serve':
        with Server((a[1], int(a[2])), Drain) as srv:
            srv.serve_forever()
        return
    if len(a) != 5 or a[0] != 'send':
        sys.exit(__doc__)
    addr, port, streams, total = a[1], int(a[2]), int(a[3]), int(a[4])
    if not 1 <= streams <= 1024 or total < 0:
        sys.exit('tcpfloor.py: STREAMS must be 1-1024 and BYTES >= 0')
    each, errs = total // streams, []
    th = [threading.Thread(target=send_one,
                           args=(addr, port, each + (total % streams if i == 0 else 0), errs))
          for i in range(streams)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    if errs:
        sys.exit('tcpfloor.py: %s' % errs[0])


if __name__ == '__main__':
    main()
