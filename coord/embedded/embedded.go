// Package embedded is the Redis a service runs inside its own process when no Redis is
// configured: miniredis behind a connection loop of ours, with a clock that follows real time.
package embedded

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// Server is miniredis behind a connection loop of ours. miniredis's own loop reads
// each command on one goroutine, hands it to another over a channel and writes its reply
// with a write of its own: a pipeline of n commands costs 2n goroutine switches and n
// writes. Ours reads and runs the commands on one goroutine and writes the replies when it
// has run everything the client sent (before it would wait for more input): one write per
// pipeline, as Redis does. The commands themselves are miniredis's. One difference: a client
// that goes away during a blocking command (BLPOP, XREAD BLOCK; nothing here sends them) is
// noticed when the command ends, at its timeout, not at once.
type Server struct {
	mini *miniredis.Miniredis
	l    net.Listener
	stop chan struct{}

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]*server.Peer
}

// Start starts a server listening on addr ("127.0.0.1:0" picks a free port).
func Start(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	m := miniredis.NewMiniRedis()
	// Dial is miniredis's one way to start it without a listener of its own; the connection
	// it makes is not needed.
	c, err := m.Dial()
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("start miniredis: %w", err)
	}
	_ = c.Close()
	e := &Server{mini: m, l: l, stop: make(chan struct{}), conns: map[net.Conn]*server.Peer{}}
	e.wg.Add(2)
	go e.accept()
	go e.followClock()
	return e, nil
}

// followClock moves miniredis's clock forward with real time: miniredis expires keys only
// when told that time passed, and without this, expiring sessions and slots would pile up
// for as long as the process runs. It moves every clockStep, so a key expires within
// clockStep of its time, and a key renewed more often than its TTL less clockStep lives.
func (e *Server) followClock() {
	defer e.wg.Done()
	t := time.NewTicker(clockStep)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-e.stop:
			return
		case now := <-t.C:
			e.mini.FastForward(now.Sub(last))
			last = now
		}
	}
}

func (e *Server) accept() {
	defer e.wg.Done()
	for {
		c, err := e.l.Accept()
		if err != nil {
			return
		}
		peer := server.NewPeer(bufio.NewWriter(c))
		e.mu.Lock()
		e.conns[c] = peer
		e.wg.Add(1)
		e.mu.Unlock()
		go e.serve(c, peer)
	}
}

// clockStep is how often the clock moves (each move visits every key with a TTL): close
// enough to real time that a key renewed every third of its TTL, as the service renews
// its keys, never expires.
const clockStep = 100 * time.Millisecond

// Addr is the address clients dial.
func (e *Server) Addr() string { return e.l.Addr().String() }

// Close stops accepting, ends every connection and stops miniredis, which also wakes the
// commands that block.
func (e *Server) Close() {
	close(e.stop)
	_ = e.l.Close()
	e.mu.Lock()
	for c, peer := range e.conns {
		peer.Close()
		_ = c.Close()
	}
	e.mu.Unlock()
	e.mini.Close()
	e.wg.Wait()
}

// flushFirst is the connection as its reader sees it: the replies written so far go out
// before the loop waits for more input.
type flushFirst struct {
	net.Conn
	peer *server.Peer
}

func (f flushFirst) Read(p []byte) (int, error) {
	f.peer.Flush()
	return f.Conn.Read(p)
}

func (e *Server) serve(c net.Conn, peer *server.Peer) {
	defer e.wg.Done()
	srv := e.mini.Server()
	r := bufio.NewReader(flushFirst{c, peer})
	subscribed := false
	defer func() {
		if subscribed {
			// miniredis's own loop drops a subscriber through the peer's disconnect hooks,
			// which only it can run; unsubscribing does the same.
			srv.Dispatch(peer, []string{"UNSUBSCRIBE"})
			srv.Dispatch(peer, []string{"PUNSUBSCRIBE"})
		}
		e.mu.Lock()
		delete(e.conns, c)
		e.mu.Unlock()
		_ = c.Close()
	}()
	for {
		args, err := readCommand(r)
		var perr protocolError
		if errors.As(err, &perr) {
			peer.WriteError("ERR " + perr.Error())
			peer.Flush()
		}
		if err != nil {
			return
		}
		if len(args) == 0 {
			continue
		}
		switch strings.ToUpper(args[0]) {
		case "SUBSCRIBE", "PSUBSCRIBE":
			subscribed = true
		}
		srv.Dispatch(peer, args)
		if peer.Closed() { // QUIT
			peer.Flush()
			return
		}
	}
}

// errProtocol is a request that is not an array of bulk strings, the only form Redis
// clients send.
var errProtocol = errors.New("redis protocol error")

// Bounds of one command. redis-server takes bulk strings up to proto-max-bulk-len (512 MB)
// and a query buffer up to client-query-buffer-limit (1 GB); the commands this service
// sends hold a few kilobytes (the largest: change events, under the 1 MB GraphQL body), so
// the embedded server keeps far lower bounds. Whatever a command announces, the reader
// allocates from the bytes that arrived, never from the count: 12 bytes announcing half a
// billion arguments cost nothing until the arguments come.
const (
	// maxArgs bounds the arguments of a command (redis-server's bound before 7.0).
	maxArgs = 1 << 20
	// maxCommandBytes bounds a command's arguments together, each counted with argOverhead.
	maxCommandBytes = 64 << 20
	argOverhead     = 16 // a string header
	// directBulk is the largest bulk string read into a buffer of its announced size;
	// larger ones grow as their bytes arrive.
	directBulk = 64 << 10
)

// protocolError is a command refused with an error reply, after which the connection
// closes (as redis-server does for a malformed multibulk).
type protocolError string

func (e protocolError) Error() string { return "Protocol error: " + string(e) }

// readCommand reads one command: an array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := readLength(r, '*')
	if err != nil {
		return nil, err
	}
	if n > maxArgs {
		return nil, protocolError("invalid multibulk length")
	}
	args := make([]string, 0, min(max(n, 0), 16))
	total := 0
	for range n {
		size, err := readLength(r, '$')
		if err != nil {
			return nil, err
		}
		if size < 0 {
			return nil, errProtocol
		}
		if total += size + argOverhead; total > maxCommandBytes {
			return nil, protocolError(fmt.Sprintf("command larger than %d bytes", maxCommandBytes))
		}
		arg, err := readBulk(r, size)
		if err != nil {
			return nil, err
		}
		args = append(args, arg)
	}
	return args, nil
}

// readBulk reads a bulk string's size bytes and its CRLF.
func readBulk(r *bufio.Reader, size int) (string, error) {
	if size <= directBulk {
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:size]), nil
	}
	var b strings.Builder
	b.Grow(directBulk)
	if _, err := io.CopyN(&b, r, int64(size)); err != nil {
		return "", err
	}
	if _, err := r.Discard(2); err != nil {
		return "", err
	}
	return b.String(), nil
}

// readLength reads a "<kind><number>\r\n" line.
func readLength(r *bufio.Reader, kind byte) (int, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 4 || line[0] != kind || line[len(line)-2] != '\r' {
		return 0, errProtocol
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil {
		return 0, errProtocol
	}
	return n, nil
}
