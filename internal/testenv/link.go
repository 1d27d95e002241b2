package testenv

import "github.com/purerdma/purerdma/internal/rtnl"

// SetLink sets the network device name up or down, for the link-down
// fault tests (the device under an rxe or siw device in the VM).
func SetLink(name string, up bool) error {
	c, err := rtnl.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	if up {
		return c.SetUp(name)
	}
	return c.SetDown(name)
}
