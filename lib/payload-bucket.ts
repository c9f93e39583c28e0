import { Duration, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';

export type PayloadAccess = 'read' | 'readWrite';

/**
 * Webhook bodies too large for a queue message (the claim check). Private, encrypted, TLS only; a
 * body is deleted once delivered, and anything left (failed, kept for a redelivery) expires a day
 * after its delivery record (deliveryRetentionDays).
 */
export class PayloadBucket {
  readonly bucket: Bucket;

  constructor(stack: Stack, props: { deliveryRetentionDays: number }) {
    this.bucket = new Bucket(stack, 'Payloads', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [
        { expiration: Duration.days(props.deliveryRetentionDays + 1), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Server access logs are not kept for the payload bucket: it only holds transient webhook bodies (claim checks) ' +
        "that the service's own roles write, read and delete, public access is blocked and TLS enforced; CloudTrail S3 " +
        'data events are the audit trail to turn on if object access must be audited.',
    });
  }

  /** The environment of a function with that access to the bucket (none without). */
  environmentFor(access: PayloadAccess | undefined): Record<string, string> {
    return access ? { PAYLOAD_BUCKET: this.bucket.bucketName } : {};
  }
}
