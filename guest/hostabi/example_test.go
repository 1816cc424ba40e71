package hostabi_test

import (
	"fmt"

	"github.com/plasmd/plasmd/guest/hostabi"
)

// Host functions answer a negative status on failure; StatusText turns it
// into a message a vendor module can put in its error.
func ExampleStatusText() {
	fmt.Println(hostabi.StatusText(hostabi.ErrSecret))
	// Output: secret not configured for this tenant
}
