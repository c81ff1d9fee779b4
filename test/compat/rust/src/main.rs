//! The `postmark` crate (the Rust client for Postmark) against this service, configured as a user would:
//! `PostmarkClient::builder().base_url(...)`. The crate joins its absolute endpoint paths ("/email") onto base_url
//! with `Url::join`, which keeps only the scheme and host, so it calls the service's routes at the root.
//! Prints one JSON line; test/compat/compat.test.ts checks it.
use std::env::var;
use std::time::{Duration, Instant};

use postmark::api::email::{SendEmailBatchRequest, SendEmailRequest};
use postmark::api::message_streams::{
    DeleteSuppressionRequest, Emails, GetSuppressionRequest, StreamIdOrName,
};
use postmark::api::messages::{OutboundDetailsRequest, OutboundSearchRequest};
use postmark::api::Body;
use postmark::reqwest::{PostmarkClient, PostmarkClientError};
use postmark::{Query, QueryError};
use serde_json::{json, Value};

/// As pinned in Cargo.toml.
const CLIENT_VERSION: &str = "2.0.1";

fn failure(error: &QueryError<PostmarkClientError>) -> Value {
    match error {
        QueryError::Api {
            status,
            error_code,
            message,
            ..
        } => json!({
            "errorType": "QueryError::Api", "status": status.as_u16(), "errorCode": error_code, "message": message
        }),
        QueryError::Json { source } => {
            json!({ "errorType": "QueryError::Json", "message": source.to_string() })
        }
        other => json!({ "errorType": "QueryError", "message": other.to_string() }),
    }
}

fn message(from: &str, to: &str, subject: &str, tag: &str) -> SendEmailRequest {
    SendEmailRequest::builder()
        .from(from)
        .to(to)
        .body(Body::text("body text".to_string()))
        .subject(subject)
        .tag(tag)
        .build()
}

async fn dumped(client: &PostmarkClient, address: &str) -> bool {
    let dump = GetSuppressionRequest::builder()
        .stream_id(StreamIdOrName::StreamId("outbound".into()))
        .build()
        .execute(client)
        .await
        .expect("suppressions dump");
    dump.suppressions.iter().any(|s| s.email_address == address)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (from, to, tag) = (
        var("COMPAT_FROM").unwrap(),
        var("COMPAT_TO").unwrap(),
        var("COMPAT_TAG").unwrap(),
    );
    let root = var("COMPAT_ROOT_URL").unwrap();
    let client = PostmarkClient::builder()
        .server_token(var("COMPAT_KEY").unwrap())
        .base_url(root.clone())
        .build();
    let mut results = json!({ "client": "postmark (crate)", "version": CLIENT_VERSION });

    let sent = message(&from, &to, "Compat rust", &tag)
        .execute(&client)
        .await
        .expect("send");
    let message_id = sent.message_id.clone().unwrap_or_default();
    results["send"] =
        json!({ "errorCode": sent.error_code, "messageId": message_id, "to": sent.to });

    let batch: SendEmailBatchRequest = vec![
        message(&from, &to, "Compat rust 1", &tag),
        message(&from, &to, "Compat rust 2", &tag),
    ];
    let batch = client.execute_endpoint(batch).await.expect("batch");
    results["batch"] = batch
        .iter()
        .map(|r| json!({ "errorCode": r.error_code, "messageId": r.message_id }))
        .collect();

    // The activity list is fed by the projector: give it a few seconds to see the three messages.
    let deadline = Instant::now() + Duration::from_secs(30);
    let listed = loop {
        let search = OutboundSearchRequest::builder()
            .count(10)
            .offset(0)
            .recipient(to.clone())
            .tag(tag.clone())
            .build();
        let page = search.execute(&client).await.expect("outbound search");
        if page.total_count >= 3 || Instant::now() > deadline {
            break page;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let ids: Vec<&str> = listed
        .messages
        .iter()
        .map(|m| m.message_id.as_str())
        .collect();
    results["list"] = json!({ "totalCount": listed.total_count, "messageIds": ids });

    results["details"] = match OutboundDetailsRequest::new(message_id.clone())
        .execute(&client)
        .await
    {
        Ok(details) => json!({ "messageId": details.message_id }),
        Err(error) => failure(&error),
    };

    let dump = var("COMPAT_DUMP").unwrap();
    results["dump"] = json!({ "contains": dumped(&client, &dump).await });
    let deleted = DeleteSuppressionRequest::builder()
        .stream_id(StreamIdOrName::StreamId("outbound".into()))
        .suppressions(vec![Emails {
            email_address: dump.clone(),
        }])
        .build()
        .execute(&client)
        .await
        .expect("delete suppressions");
    results["delete"] = json!({ "status": format!("{:?}", deleted.suppressions[0].status) });
    results["dumpAfterDelete"] = json!({ "contains": dumped(&client, &dump).await });

    let stranger = PostmarkClient::builder()
        .server_token(format!("sl_live_{}", "z".repeat(40)))
        .base_url(root)
        .build();
    results["wrongKey"] = match message(&from, &to, "x", &tag).execute(&stranger).await {
        Ok(_) => json!({}),
        Err(error) => failure(&error),
    };
    results["inactive"] = match message(&from, &var("COMPAT_GONE").unwrap(), "x", &tag)
        .execute(&client)
        .await
    {
        Ok(_) => json!({}),
        Err(error) => failure(&error),
    };
    println!("{}", results);
}
