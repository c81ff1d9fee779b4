import type { BatchHandler } from '../apply';
import { isActivityEvent, type ClickHouseActivityWriter } from './writer';

/** Hands a batch of `email.messages` to the activity writer; resolves once its rows are in ClickHouse. */
export function activityHandler(writer: ClickHouseActivityWriter): BatchHandler {
  return (items) =>
    writer.write(
      items.flatMap(({ event, position }) =>
        isActivityEvent(event) ? [{ event, position: { partition: position.partition, offset: position.offset } }] : [],
      ),
    );
}
