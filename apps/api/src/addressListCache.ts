import { parseAddressList, type AddressListParser, type AddressResult, type Mailbox } from '@sendline/domain';

/**
 * The send path's memory of parsed address lists. The RFC 5322 parser costs 20 µs and more an address (a bare one
 * skips it), and a batch repeats its From hundreds of times (a load test its To); the answer depends on the input
 * alone, so remembering recent answers changes nothing but speed. The domain keeps no cache: this one belongs to
 * the API process.
 *
 * Bounded: at RECENT_LISTS_MAX entries the memory is emptied and starts again.
 */
const RECENT_LISTS_MAX = 2048;
const recentLists = new Map<string, AddressResult<Mailbox[]>>();

/** A copy for the caller to keep: the validated message may be changed later, the remembered answer never. */
function copyResult(result: AddressResult<Mailbox[]>): AddressResult<Mailbox[]> {
  return result.ok ? { ok: true, value: result.value.map((mailbox) => ({ ...mailbox })) } : result;
}

/** `parseAddressList`, answered from memory when the same list was parsed recently. */
export const parseAddressListCached: AddressListParser = (input) => {
  const remembered = recentLists.get(input);
  if (remembered) return copyResult(remembered);
  const result = parseAddressList(input);
  if (recentLists.size >= RECENT_LISTS_MAX) recentLists.clear();
  recentLists.set(input, result);
  return copyResult(result);
};
