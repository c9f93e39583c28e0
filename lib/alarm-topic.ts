import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { AlarmBase, IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

export interface AlarmTopicProps {
  /** Subscribed to the topic when set. */
  email?: string;
}

/**
 * The one SNS topic every alarm of the service notifies: encrypted, TLS only, optionally with an
 * e-mail subscription.
 *
 * The key is a customer managed KMS key, not the AWS managed `alias/aws/sns`: CloudWatch alarms
 * cannot publish to a topic under the AWS managed key (its key policy, which cannot be edited, does
 * not let CloudWatch use it, so every notification would fail silently). This key's policy lets
 * CloudWatch generate data keys for the topic; its rotation is on.
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;
  /** The action that sends an alarm's state changes to the topic. */
  readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');

    const key = new Key(this, 'Key', {
      description: `Encrypts the alarm notifications of ${stack.stackName}`,
      enableKeyRotation: true,
      // Nothing outlives the topic that this key would have to decrypt.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToUseTheKey',
        principals: [cloudWatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );

    this.topic = new Topic(this, 'Topic', {
      displayName: `${stack.stackName} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    // Only this account's alarms may publish through the service principal.
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowThisAccountsAlarmsToPublish',
        principals: [cloudWatch],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
          StringEquals: { 'aws:SourceAccount': stack.account },
        },
      }),
    );
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));

    this.action = new SnsAction(this.topic);
  }
}

/** `alarm`, notifying `action` when it goes into ALARM and when it is OK again, as every alarm of the service does. */
export function notifying<A extends AlarmBase>(alarm: A, action: IAlarmAction): A {
  alarm.addAlarmAction(action);
  alarm.addOkAction(action);
  return alarm;
}
