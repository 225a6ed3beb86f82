package anthropicsdk_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/retrysim/retrysim/policies"
	"github.com/retrysim/retrysim/policies/anthropicsdk"
)

func TestReadStream(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		text  string // the text of the message returned
		check func(error) bool
		class policies.Class // Classify's class of the error
	}{
		{"complete", reply{status: 200}, "Hello", func(err error) bool { return err == nil }, policies.Success},
		{"ends without message_stop", reply{status: 200, cutShort: true}, "Hel",
			func(err error) bool {
				return errors.Is(err, anthropicsdk.ErrIncompleteStream) && errors.Is(err, io.ErrUnexpectedEOF)
			}, policies.Transient},
		{"error event", reply{status: 200, midStream: overloadedBody}, "Hel",
			func(err error) bool { var e *anthropic.Error; return errors.As(err, &e) }, policies.Capacity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := newClient(newFakeAPI(tt.reply))
			stream := client.Messages.NewStreaming(t.Context(), params("big"))
			defer stream.Close()
			msg, err := anthropicsdk.ReadStream(t.Context(), stream)
			if !tt.check(err) {
				t.Errorf("ReadStream error %v", err)
			}
			var text string
			for _, b := range msg.Content {
				text += b.Text
			}
			if text != tt.text {
				t.Errorf("message text %q, want %q", text, tt.text)
			}
			if got := anthropicsdk.Classify(err, time.Now()).Class; got != tt.class {
				t.Errorf("Classify = %v, want %v", got, tt.class)
			}
			if err != nil {
				if got := policies.ClassifyError(err, time.Now()).Class; tt.class == policies.Transient && got != tt.class {
					t.Errorf("ClassifyError = %v, want %v", got, tt.class)
				}
			}
		})
	}
}
