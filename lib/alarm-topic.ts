import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { AlarmBase, IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IRuleTarget } from 'aws-cdk-lib/aws-events';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';

/** What an alarm asks of whoever hears it: someone now (page), or in working hours (ticket). */
export type AlarmSeverity = 'page' | 'ticket';

export interface AlarmTopicProps {
  severity: AlarmSeverity;
  /** Subscribed to the topic (SNS e-mails each a confirmation link first). */
  emails: readonly string[];
  /** The key of the stack's other alarm topic: one key serves both. */
  key?: Key;
}

/**
 * An SNS topic the alarms of one severity notify: encrypted, TLS only, with e-mail subscriptions.
 *
 * The key is a customer managed KMS key, not the AWS managed `alias/aws/sns`: CloudWatch alarms
 * cannot publish to a topic under the AWS managed key (its key policy, which cannot be edited, does
 * not let CloudWatch use it, so every notification would fail silently). This key's policy lets
 * CloudWatch generate data keys for the topic; its rotation is on.
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;
  readonly key: Key;
  /** The action that sends an alarm's state changes to the topic. */
  readonly action: SnsAction;
  private eventBridgeTarget?: IRuleTarget;

  constructor(scope: Construct, id: string, props: AlarmTopicProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');

    this.key = props.key ?? this.createKey(stack, cloudWatch);
    this.topic = new Topic(this, 'Topic', {
      displayName: `${stack.stackName} alarms: ${props.severity}`,
      masterKey: this.key,
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
    for (const email of props.emails) this.topic.addSubscription(new EmailSubscription(email));

    this.action = new SnsAction(this.topic);
  }

  private createKey(stack: Stack, cloudWatch: ServicePrincipal): Key {
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
    return key;
  }

  /**
   * The topic as an EventBridge rule's target. EventBridge publishes as its service principal: the
   * topic lets this account's rules do so, and the key lets EventBridge use it, or the encrypted
   * topic refuses every event
   * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html#eb-sns-permissions,
   * https://repost.aws/knowledge-center/sns-not-getting-eventbridge-notification).
   */
  ruleTarget(): IRuleTarget {
    if (this.eventBridgeTarget) return this.eventBridgeTarget;
    const stack = Stack.of(this);
    const eventBridge = new ServicePrincipal('events.amazonaws.com');
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowThisAccountsRulesToPublish',
        principals: [eventBridge],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:events:${stack.region}:${stack.account}:rule/*` },
          StringEquals: { 'aws:SourceAccount': stack.account },
        },
      }),
    );
    // Identical statements from both topics of a shared key are kept once.
    this.key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowEventBridgeRulesToUseTheKey',
        principals: [eventBridge],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.eventBridgeTarget = { bind: () => ({ arn: this.topic.topicArn }) };
    return this.eventBridgeTarget;
  }
}

export interface AlarmTopicsProps {
  /** Subscribed to both topics. */
  alarmEmail?: string;
  /** Subscribed to the page topic only (a pager's e-mail address, say). */
  pageEmail?: string;
}

/**
 * A stack's two alarm topics, under one key: `page`, for what users feel now, and `ticket`, for what
 * can wait for working hours. The page topic is the construct `Alarms`, the one topic every alarm
 * notified before: its logical ids, and so the topic itself and its confirmed subscriptions (those
 * an operator added by hand too), stay, and what pages keeps reaching them through a deploy while
 * the new ticket topic's subscriptions wait for their confirmation.
 */
export class AlarmTopics {
  readonly page: AlarmTopic;
  readonly ticket: AlarmTopic;

  constructor(scope: Construct, props: AlarmTopicsProps) {
    const everyone = props.alarmEmail ? [props.alarmEmail] : [];
    this.page = new AlarmTopic(scope, 'Alarms', {
      severity: 'page',
      // The same address twice is one subscription.
      emails: [...new Set([...everyone, ...(props.pageEmail ? [props.pageEmail] : [])])],
    });
    this.ticket = new AlarmTopic(scope, 'TicketAlarms', { severity: 'ticket', emails: everyone, key: this.page.key });
  }

  /** The action of the topic of a severity. */
  action(severity: AlarmSeverity): IAlarmAction {
    return this[severity].action;
  }
}

/** `alarm`, notifying `action` when it goes into ALARM and when it is OK again, as every alarm of the service does. */
export function notifying<A extends AlarmBase>(alarm: A, action: IAlarmAction): A {
  alarm.addAlarmAction(action);
  alarm.addOkAction(action);
  return alarm;
}
