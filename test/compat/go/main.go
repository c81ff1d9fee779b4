// mrz1836/postmark (the maintained fork of keighl/postmark, the most starred Go client; both build URLs the same
// way) against this service, configured as a user would: client.BaseURL = "http://host:port/v1". The client calls
// BaseURL + "/" + "email", so it keeps /v1. Prints one JSON line; test/compat/compat.test.ts checks it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mrz1836/postmark"
)

func failure(err error) map[string]any {
	var apiErr postmark.APIError
	if errors.As(err, &apiErr) {
		return map[string]any{"errorType": "postmark.APIError", "errorCode": apiErr.ErrorCode, "message": apiErr.Message}
	}
	return map[string]any{"errorType": fmt.Sprintf("%T", err), "message": err.Error()}
}

func dumped(ctx context.Context, client *postmark.Client, address string) bool {
	suppressions, err := client.GetSuppressions(ctx, "outbound", nil)
	if err != nil {
		panic(err)
	}
	for _, s := range suppressions {
		if s.EmailAddress == address {
			return true
		}
	}
	return false
}

func clientVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/mrz1836/postmark" {
				return dep.Version
			}
		}
	}
	return ""
}

func main() {
	ctx := context.Background()
	env := os.Getenv
	from, to, tag := env("COMPAT_FROM"), env("COMPAT_TO"), env("COMPAT_TAG")
	client := postmark.NewClient(env("COMPAT_KEY"), "")
	client.BaseURL = env("COMPAT_BASE_URL")
	results := map[string]any{"client": "github.com/mrz1836/postmark", "version": clientVersion()}
	message := func(to, subject string) postmark.Email {
		return postmark.Email{From: from, To: to, Subject: subject, TextBody: "body text", Tag: tag}
	}

	sent, err := client.SendEmail(ctx, message(to, "Compat go"))
	if err != nil {
		panic(err)
	}
	results["send"] = map[string]any{"errorCode": sent.ErrorCode, "messageId": sent.MessageID, "to": sent.To}

	batch, err := client.SendEmailBatch(ctx, []postmark.Email{message(to, "Compat go 1"), message(to, "Compat go 2")})
	if err != nil {
		panic(err)
	}
	batchResults := []map[string]any{}
	for _, r := range batch {
		batchResults = append(batchResults, map[string]any{"errorCode": r.ErrorCode, "messageId": r.MessageID})
	}
	results["batch"] = batchResults

	// The activity list is fed by the projector: give it a few seconds to see the three messages.
	deadline := time.Now().Add(30 * time.Second)
	var listed []postmark.OutboundMessage
	var total int64
	for {
		listed, total, err = client.GetOutboundMessages(ctx, 10, 0, map[string]any{"recipient": to, "tag": tag})
		if err != nil {
			panic(err)
		}
		if total >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	ids := []string{}
	for _, m := range listed {
		ids = append(ids, m.MessageID)
	}
	results["list"] = map[string]any{"totalCount": total, "messageIds": ids}

	details, err := client.GetOutboundMessage(ctx, sent.MessageID)
	if err != nil {
		results["details"] = failure(err)
	} else {
		types := []string{}
		for _, e := range details.MessageEvents {
			types = append(types, e.Type)
		}
		results["details"] = map[string]any{"messageId": details.MessageID, "textBody": details.TextBody, "eventTypes": types}
	}

	dump := env("COMPAT_DUMP")
	results["dump"] = map[string]any{"contains": dumped(ctx, client, dump)}
	deleted, err := client.DeleteSuppressions(ctx, "outbound", []postmark.Suppression{{EmailAddress: dump}})
	if err != nil {
		panic(err)
	}
	results["delete"] = map[string]any{"status": deleted[0].Status}
	results["dumpAfterDelete"] = map[string]any{"contains": dumped(ctx, client, dump)}

	stranger := postmark.NewClient("sl_live_"+strings.Repeat("z", 40), "")
	stranger.BaseURL = client.BaseURL
	if _, err := stranger.SendEmail(ctx, message(to, "x")); err != nil {
		results["wrongKey"] = failure(err)
	} else {
		results["wrongKey"] = map[string]any{}
	}
	if _, err := client.SendEmail(ctx, message(env("COMPAT_GONE"), "x")); err != nil {
		results["inactive"] = failure(err)
	} else {
		results["inactive"] = map[string]any{}
	}

	out, _ := json.Marshal(results)
	fmt.Println(string(out))
}
