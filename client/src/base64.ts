/** Bytes to base64 with `btoa` only (no Buffer), in chunks so large attachments don't overflow the call stack. */
export function bytesToBase64(bytes: Uint8Array): string {
  const chunkSize = 0x8000;
  let binary = '';
  for (let start = 0; start < bytes.length; start += chunkSize) {
    binary += String.fromCharCode(...bytes.subarray(start, start + chunkSize));
  }
  return btoa(binary);
}

/** Attachment content as the wire wants it: strings are taken to be base64 already; bytes are encoded. */
export function contentToBase64(content: string | Uint8Array | ArrayBuffer | ArrayBufferView): string {
  if (typeof content === 'string') return content;
  if (ArrayBuffer.isView(content)) {
    return bytesToBase64(new Uint8Array(content.buffer, content.byteOffset, content.byteLength));
  }
  return bytesToBase64(new Uint8Array(content));
}
