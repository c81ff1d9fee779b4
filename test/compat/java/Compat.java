import com.postmarkapp.postmark.Postmark;
import com.postmarkapp.postmark.client.ApiClient;
import com.postmarkapp.postmark.client.Parameters;
import com.postmarkapp.postmark.client.data.model.message.Message;
import com.postmarkapp.postmark.client.data.model.message.MessageResponse;
import com.postmarkapp.postmark.client.data.model.messages.OutboundMessage;
import com.postmarkapp.postmark.client.data.model.messages.OutboundMessageDetails;
import com.postmarkapp.postmark.client.data.model.messages.OutboundMessageDetailsEvents;
import com.postmarkapp.postmark.client.data.model.messages.OutboundMessages;
import com.postmarkapp.postmark.client.data.model.suppressions.Suppression;
import com.postmarkapp.postmark.client.data.model.suppressions.SuppressionEntries;
import com.postmarkapp.postmark.client.data.model.suppressions.SuppressionStatuses;
import com.postmarkapp.postmark.client.exception.PostmarkException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Postmark's official Java client (com.postmarkapp:postmark) against this service, configured as a user would:
 * Postmark.getApiClient(key, secureConnection, "host:port/v1"). The client builds "http(s)://" + that + "/email/", so
 * it keeps /v1 and adds a trailing slash. Prints one JSON line; test/compat/compat.test.ts checks it.
 */
public class Compat {
    static Map<String, Object> failure(PostmarkException error) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("errorType", error.getClass().getSimpleName());
        result.put("errorCode", error.getErrorCode());
        result.put("message", error.getMessage());
        return result;
    }

    static Message message(String from, String to, String subject, String tag) {
        Message message = new Message(from, to, subject, null, "body text");
        message.setTag(tag);
        return message;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> env = System.getenv();
        String host = env.get("COMPAT_HOST"), from = env.get("COMPAT_FROM"), to = env.get("COMPAT_TO");
        String tag = env.get("COMPAT_TAG");
        ApiClient client = Postmark.getApiClient(env.get("COMPAT_KEY"), false, host + "/v1");
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("client", "com.postmarkapp:postmark");
        results.put("version", Postmark.libraryVersion());

        MessageResponse sent = client.deliverMessage(message(from, to, "Compat java", tag));
        Map<String, Object> send = new LinkedHashMap<>();
        send.put("errorCode", sent.getErrorCode());
        send.put("messageId", sent.getMessageId());
        send.put("to", sent.getTo());
        results.put("send", send);

        List<Map<String, Object>> batch = new ArrayList<>();
        for (MessageResponse r : client.deliverMessage(
                List.of(message(from, to, "Compat java 1", tag), message(from, to, "Compat java 2", tag)))) {
            batch.add(Map.of("errorCode", r.getErrorCode(), "messageId", r.getMessageId()));
        }
        results.put("batch", batch);

        // The activity list is fed by the projector: give it a few seconds to see the three messages.
        long deadline = System.currentTimeMillis() + 30_000;
        OutboundMessages listed;
        while (true) {
            listed = client.getMessages(Parameters.init().build("count", 10).build("offset", 0)
                    .build("recipient", to).build("tag", tag));
            if (listed.getTotalCount() >= 3 || System.currentTimeMillis() > deadline) break;
            Thread.sleep(500);
        }
        List<String> ids = new ArrayList<>();
        for (OutboundMessage m : listed.getMessages()) ids.add(m.getMessageId());
        results.put("list", Map.of("totalCount", listed.getTotalCount(), "messageIds", ids));

        OutboundMessageDetails details = client.getMessageDetails(sent.getMessageId());
        List<String> types = new ArrayList<>();
        for (OutboundMessageDetailsEvents e : details.getMessageEvents()) types.add(e.getType());
        results.put("details", Map.of("messageId", details.getMessageId(), "textBody", details.getTextBody(),
                "eventTypes", types));

        String dumpAddress = env.get("COMPAT_DUMP");
        results.put("dump", Map.of("contains", dumped(client, dumpAddress)));
        SuppressionStatuses deleted = client.deleteSuppressions("outbound", new SuppressionEntries(new String[] {dumpAddress}));
        results.put("delete", Map.of("status", deleted.getSuppressions().get(0).getStatus()));
        results.put("dumpAfterDelete", Map.of("contains", dumped(client, dumpAddress)));

        try {
            Postmark.getApiClient("sl_live_" + "z".repeat(40), false, host + "/v1")
                    .deliverMessage(message(from, to, "x", tag));
            results.put("wrongKey", Map.of());
        } catch (PostmarkException error) {
            results.put("wrongKey", failure(error));
        }
        try {
            client.deliverMessage(message(from, env.get("COMPAT_GONE"), "x", tag));
            results.put("inactive", Map.of());
        } catch (PostmarkException error) {
            results.put("inactive", failure(error));
        }
        System.out.println(new ObjectMapper().writeValueAsString(results));
    }

    static boolean dumped(ApiClient client, String address) throws Exception {
        for (Suppression s : client.getSuppressions("outbound").getSuppressions()) {
            if (address.equals(s.getEmailAddress())) return true;
        }
        return false;
    }
}
