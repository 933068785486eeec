package pmi

import (
	"strconv"
	"strings"
)

// handleV1 answers one PMI-1 command (MPICH's simple PMI client).
func (c *conn) handleV1(m Message) (done bool, err error) {
	s := c.s
	switch m.Cmd {
	case "init":
		return false, c.init(m)
	case "get_maxes":
		return false, c.send(Message{Cmd: "maxes", Args: rc(0,
			KV{"kvsname_max", strconv.Itoa(KVSNameMax)},
			KV{"keylen_max", strconv.Itoa(KeyLenMax)},
			KV{"vallen_max", strconv.Itoa(ValLenMax)})})
	case "get_appnum":
		return false, c.send(Message{Cmd: "appnum", Args: rc(0, KV{"appnum", "0"})})
	case "get_my_kvsname":
		return false, c.send(Message{Cmd: "my_kvsname", Args: rc(0, KV{"kvsname", s.job.ID})})
	case "get_universe_size":
		return false, c.send(Message{Cmd: "universe_size", Args: rc(0, KV{"size", strconv.Itoa(s.job.Size)})})
	case "put":
		key, _ := m.Get("key")
		value, _ := m.Get("value")
		if err := s.put(key, value); err != nil {
			return false, c.send(Message{Cmd: "put_result", Args: rc(-1, KV{"msg", v1Word(err.Error())})})
		}
		return false, c.send(Message{Cmd: "put_result", Args: rc(0)})
	case "get":
		key, _ := m.Get("key")
		if v, ok := s.get(key); ok {
			return false, c.send(Message{Cmd: "get_result", Args: rc(0, KV{"value", v})})
		}
		return false, c.send(Message{Cmd: "get_result", Args: rc(-1, KV{"msg", v1Word("key " + key + " not found")})})
	case "barrier_in":
		if err := s.enterFence(); err != nil {
			return false, err // closing the connection fails the rank's PMI_Barrier
		}
		return false, c.send(Message{Cmd: "barrier_out"})
	case "finalize":
		c.finalized = true
		return true, c.send(Message{Cmd: "finalize_ack"})
	case "abort":
		code, err := strconv.Atoi(firstOf(m, "exitcode"))
		if err != nil {
			code = 1
		}
		msg, _ := m.Get("error_msg")
		c.finalized = true
		s.Abort(c.rank, code, msg)
		return true, nil
	}
	return false, c.send(Message{Cmd: m.Cmd + "_result", Args: rc(-1, KV{"msg", v1Word("unknown command " + m.Cmd)})})
}

// handleV2 answers one PMI-2 command (MPICH's PMI-2 client).
func (c *conn) handleV2(m Message) (done bool, err error) {
	s := c.s
	reply := func(cmd string, args ...KV) error {
		if t, ok := m.Get("thrid"); ok {
			args = append(args, KV{"thrid", t})
		}
		return c.send(Message{Cmd: cmd, Args: args})
	}
	found := func(cmd, v string, ok bool) error {
		if !ok {
			return reply(cmd, rc(0, KV{"found", "FALSE"})...)
		}
		return reply(cmd, rc(0, KV{"found", "TRUE"}, KV{"value", v})...)
	}
	switch m.Cmd {
	case "fullinit":
		return false, reply("fullinit-response", rc(0,
			KV{"pmi-version", "2"}, KV{"pmi-subversion", "0"},
			KV{"rank", strconv.Itoa(c.rank)}, KV{"size", strconv.Itoa(s.job.Size)},
			KV{"appnum", "0"}, KV{"debugged", "FALSE"}, KV{"pmiverbose", "FALSE"})...)
	case "job-getid":
		return false, reply("job-getid-response", rc(0, KV{"jobid", s.job.ID})...)
	case "kvs-put":
		key, _ := m.Get("key")
		value, _ := m.Get("value")
		if err := s.put(key, value); err != nil {
			return false, reply("kvs-put-response", rc(-1, KV{"errmsg", err.Error()})...)
		}
		return false, reply("kvs-put-response", rc(0)...)
	case "kvs-fence":
		if err := s.enterFence(); err != nil {
			return false, err
		}
		return false, reply("kvs-fence-response", rc(0)...)
	case "kvs-get":
		key, _ := m.Get("key")
		v, ok := s.get(key)
		return false, found("kvs-get-response", v, ok)
	case "info-getjobattr", "info-getnodeattr":
		lookup := s.jobAttr
		if m.Cmd == "info-getnodeattr" {
			lookup = s.nodeAttr
		}
		v, ok := lookup(firstOf(m, "key"))
		return false, found(m.Cmd+"-response", v, ok)
	case "info-putnodeattr":
		key, _ := m.Get("key")
		value, _ := m.Get("value")
		s.putNodeAttr(key, value)
		return false, reply("info-putnodeattr-response", rc(0)...)
	case "finalize":
		c.finalized = true
		return true, reply("finalize-response", rc(0)...)
	case "abort":
		// PMI-2's abort carries a message but no exit code.
		msg, _ := m.Get("msg")
		c.finalized = true
		s.Abort(c.rank, 1, msg)
		return true, nil
	}
	return false, reply(m.Cmd+"-response", rc(-1, KV{"errmsg", "unknown command " + m.Cmd})...)
}

// jobAttr is a PMI-2 job attribute.
func (s *Server) jobAttr(key string) (string, bool) {
	switch key {
	case "PMI_process_mapping":
		return s.job.Mapping, s.job.Mapping != ""
	case "universeSize":
		return strconv.Itoa(s.job.Size), true
	}
	return "", false
}

// Node attributes are PMI-2's node-local store (no fence involved).
func (s *Server) nodeAttr(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.nodeAttrs[key]
	return v, ok
}

func (s *Server) putNodeAttr(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodeAttrs == nil {
		s.nodeAttrs = map[string]string{}
	}
	s.nodeAttrs[key] = value
}

func firstOf(m Message, key string) string {
	v, _ := m.Get(key)
	return v
}

// v1Word makes text one PMI-1 value: a value ends at a space.
func v1Word(s string) string { return strings.ReplaceAll(s, " ", "_") }
