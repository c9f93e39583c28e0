import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

let client: S3Client | undefined;

/** The S3 client, created once per cold start; S3_ENDPOINT is set only off AWS (fauxqs). */
export function s3(): S3Client {
  client ??= new S3Client({
    endpoint: process.env.S3_ENDPOINT || undefined,
    // fauxqs answers path-style requests; AWS takes either.
    forcePathStyle: Boolean(process.env.S3_ENDPOINT),
  });
  return client;
}

function bucket(): string {
  const name = process.env.PAYLOAD_BUCKET;
  if (!name) throw new Error('Missing required environment variable PAYLOAD_BUCKET');
  return name;
}

/** The claim check: bodies too large for a queue message wait in the payload bucket. */
export async function putPayload(key: string, body: string): Promise<void> {
  await s3().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body, ContentType: 'application/json' }));
}

/** The stored body, or undefined when it is gone (delivered, or expired by the bucket's lifecycle rule). */
export async function getPayload(key: string): Promise<string | undefined> {
  try {
    const object = await s3().send(new GetObjectCommand({ Bucket: bucket(), Key: key }));
    return await object.Body?.transformToString('utf8');
  } catch (error) {
    if (error instanceof NoSuchKey) return undefined;
    throw error;
  }
}

export async function deletePayload(key: string): Promise<void> {
  await s3().send(new DeleteObjectCommand({ Bucket: bucket(), Key: key }));
}
