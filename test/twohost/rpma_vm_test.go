package twohost_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/purerdma/purerdma/internal/testenv"
)

// TestRpmaExamples runs the Go ports of librpma's examples (cmd/
// rpma-examples) with the server in guest a and the client in guest b.
func TestRpmaExamples(t *testing.T) {
	testenv.RequirePair(t)
	tool := testenv.CSide("rpma-examples", testenv.ProjectTool(t, "rpma-examples"))
	hello := []string{"Next value: Hello world!", "translating...", "Translation: ¡Hola Mundo!"}
	tests := []struct {
		example                string
		clientArgs             []string
		serverWant, clientWant []string
	}{
		{"01-connection", nil, []string{"Received a message: Hello server!"}, []string{"Received a message: Hello client!"}},
		{"02-read-to-volatile", nil, nil, []string{"Read a message: Hello client!"}},
		{"04-write-to-persistent", nil, []string{"New value: Hello world!"}, hello},
		{"05-flush-to-persistent", nil, []string{"New value: Hello world!"}, hello},
		{"07-atomic-write", []string{"hello", "atomic", "world"}, []string{"hello", "atomic", "world"}, []string{"used value: 16"}},
		{"08-messages-ping-pong", []string{"5", "3"},
			[]string{"Value received: 5", "Value sent: 6", "Value received: 6", "Value sent: 7"},
			[]string{"Value sent: 5", "Value received: 6", "Value sent: 6", "Value received: 7"}},
		{"08srq-simple-messages-ping-pong-with-srq", []string{"5", "3"},
			[]string{"Value received: 5", "Value sent: 6", "Value received: 7", "Value sent: 8"},
			[]string{"Value sent: 5", "Value received: 6", "Value sent: 7", "Value received: 8"}},
		{"10-send-with-imm", []string{"12345", "hello"},
			[]string{"Received value 'hello' with immediate data '12345'"},
			[]string{"Sending value 'hello' with immediate data '12345'"}},
		{"11-write-with-imm", []string{"4321"},
			[]string{"The value '4321' was written together with immediate data '4321'"},
			[]string{"Writing value '4321' with immediate data '4321'"}},
		{"12-receive-completion-queue", []string{"1", "3"},
			[]string{"SERVER: Value received: 1", "SERVER: Value sent: 2", "SERVER: Value received: 2", "SERVER: Value sent: 3"},
			[]string{"CLIENT: Value sent: 1", "CLIENT: Value received: 2", "CLIENT: Value sent: 2", "CLIENT: Value received: 3"}},
	}
	for i, tt := range tests {
		t.Run(tt.example, func(t *testing.T) {
			p := begin(t)
			port := strconv.Itoa(7500 + i)
			addr := serverAddr(p)
			r := runTool(p, tool, tool,
				[]string{tt.example, "server", addr, port},
				append([]string{tt.example, "client", addr, port}, tt.clientArgs...))
			want := tt.clientWant
			if p.Server() {
				want = tt.serverWant
			}
			if r.Code != 0 {
				t.Fatalf("guest %s (%s):\n%v", p.Name, p.Role, r)
			}
			for _, w := range want {
				if !strings.Contains(r.Stdout, w+"\n") {
					t.Errorf("guest %s (%s): no line %q in\n%v", p.Name, p.Role, w, r)
				}
			}
			t.Logf("guest %s (%s):\n%v", p.Name, p.Role, r)
		})
	}
}
