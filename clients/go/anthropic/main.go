// Command anthropic is the harness of the real anthropic-sdk-go for
// 'retrysim validate --exec': see package harness.
//
//	retrysim validate --exec 'go run ./clients/go/anthropic' --preset anthropic-sdk-go --file F
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/retrysim/retrysim/clients/go/harness"
)

func main() {
	if err := harness.Run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "anthropic harness:", err)
		os.Exit(2)
	}
}
