//go:build js && wasm

// Command wasm is the engine of 'retrysim playground' for the browser
// (GOOS=js GOARCH=wasm): it sets globalThis.retrysimCall(method, json) to
// playground.Call and waits for calls. The page's worker loads it.
package main

import (
	"context"
	"syscall/js"

	"github.com/retrysim/retrysim/playground"
)

func main() {
	js.Global().Set("retrysimCall", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 2 {
			return `{"error":"retrysimCall takes a method and a JSON argument"}`
		}
		return playground.Call(context.Background(), args[0].String(), args[1].String())
	}))
	select {}
}
