package rdmanl

import "fmt"

// String formats p as iproute2's `rdma link show` does:
//
//	link rxe0/1 state ACTIVE physical_state LINK_UP netdev veth0
func (p Port) String() string {
	s := fmt.Sprintf("link %s/%d state %s physical_state %s", p.DevName, p.Port, stateName(p.State), physStateName(p.PhysState))
	if p.NetdevName != "" {
		s += " netdev " + p.NetdevName
	}
	return s
}

// The names are iproute2's, so that output matches it even where they
// differ from the kernel's enum names.

func stateName(s uint8) string {
	return name([]string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}, s)
}

func physStateName(s uint8) string {
	return name([]string{"NOP", "SLEEP", "POLLING", "DISABLED", "ARMED", "LINK_UP",
		"LINK_ERROR_RECOVER", "PHY_TEST", "UNKNOWN", "OPA_OFFLINE", "UNKNOWN", "OPA_TEST"}, s)
}

func name(names []string, i uint8) string {
	if int(i) < len(names) {
		return names[i]
	}
	return "UNKNOWN"
}
