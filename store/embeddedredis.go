package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// embeddedRedis is miniredis behind a connection loop of ours. miniredis's own loop reads
// each command on one goroutine, hands it to another over a channel and writes its reply
// with a write of its own: a pipeline of n commands costs 2n goroutine switches and n
// writes. Ours reads and runs the commands on one goroutine and writes the replies when it
// has run everything the client sent (before it would wait for more input): one write per
// pipeline, as Redis does. The commands themselves are miniredis's. One difference: a client
// that goes away during a blocking command (BLPOP, XREAD BLOCK; nothing here sends them) is
// noticed when the command ends, at its timeout, not at once.
type embeddedRedis struct {
	mini *miniredis.Miniredis
	l    net.Listener

	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]*server.Peer
}

// startEmbeddedRedis starts miniredis listening on addr.
func startEmbeddedRedis(addr string) (*embeddedRedis, error) {
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
	e := &embeddedRedis{mini: m, l: l, conns: map[net.Conn]*server.Peer{}}
	e.wg.Add(1)
	go e.accept()
	return e, nil
}

func (e *embeddedRedis) accept() {
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

// addr is the address clients dial.
func (e *embeddedRedis) addr() string { return e.l.Addr().String() }

// close stops accepting, ends every connection and stops miniredis, which also wakes the
// commands that block.
func (e *embeddedRedis) close() {
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

func (e *embeddedRedis) serve(c net.Conn, peer *server.Peer) {
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

// readCommand reads one command: an array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := readLength(r, '*')
	if err != nil {
		return nil, err
	}
	args := make([]string, 0, max(n, 0))
	for range n {
		size, err := readLength(r, '$')
		if err != nil {
			return nil, err
		}
		if size < 0 {
			return nil, errProtocol
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args = append(args, string(buf[:size]))
	}
	return args, nil
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
	if err != nil || n > 512<<20 {
		return 0, errProtocol
	}
	return n, nil
}
