#!/usr/bin/env bash
# Smoke test with Debian's AWS CLI v2: starts `kumo serve --in-memory` on a free port,
# then creates a table, writes, reads and deletes an item, turns on Time to Live, reads
# the table's stream, runs PartiQL statements (one by one, in a transaction and in a batch)
# and deletes the table, checking every response. Exits non-zero on the first mismatch.
#   KUMO_BIN  server binary (default: build/kumo)
#   AWS_CLI   AWS CLI v2 executable (default: /usr/bin/aws)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${KUMO_BIN:-$root/build/kumo}
aws_cli=${AWS_CLI:-/usr/bin/aws}
python=/usr/bin/python3

fail() {
  echo "cli smoke: FAIL: $*" >&2
  exit 1
}

[ -x "$bin" ] || fail "no server binary at $bin"
[ -x "$aws_cli" ] || fail "no AWS CLI at $aws_cli (Debian package awscli)"
case "$("$aws_cli" --version 2>&1)" in
  aws-cli/2.*) ;;
  *) fail "$aws_cli is not AWS CLI v2: $("$aws_cli" --version 2>&1)" ;;
esac

smoke="cli smoke"
# shellcheck source=tests/smoke/server.sh
source "$(dirname "${BASH_SOURCE[0]}")/server.sh"

export AWS_ACCESS_KEY_ID=smokeAccessKey
export AWS_SECRET_ACCESS_KEY=smokeSecretKey
export AWS_DEFAULT_REGION=us-east-1
export AWS_PAGER=""
export AWS_MAX_ATTEMPTS=1
export AWS_CONFIG_FILE="$work/aws-config"
export AWS_SHARED_CREDENTIALS_FILE="$work/aws-credentials"
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_REGION

# call SERVICE OP ARGS... : runs `aws SERVICE OP`, output in $work/out.json; fails on error.
call() {
  local service=$1 op=$2
  shift 2
  if ! "$aws_cli" "$service" "$op" --endpoint-url "$endpoint" --output json "$@" \
      >"$work/out.json" 2>"$work/err.txt"; then
    cat "$work/err.txt" >&2
    fail "aws $service $op failed"
  fi
}
ddb() { call dynamodb "$@"; }
streams() { call dynamodbstreams "$@"; }

# json EXPR : prints a value taken from the output of the last call (`r`).
json() {
  "$python" -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$work/out.json" "$1"
}

# check DESCRIPTION PYTHON_EXPR [JSON] : evaluates the expression with `r` bound to the
# parsed output of the last call ({} when it printed nothing) and `e` to the parsed JSON
# argument; fails unless it is true.
check() {
  "$python" - "$work/out.json" "$2" "${3:-null}" <<'PY' || fail "$1"
import json, sys
text = open(sys.argv[1]).read().strip()
r = json.loads(text) if text else {}
e = json.loads(sys.argv[3])
ok = eval(sys.argv[2], {"r": r, "e": e})
if not ok:
    print(json.dumps(r, indent=2, sort_keys=True), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
  echo "ok: $1"
}

table=kumo_smoke_cli
key='{"pk": {"S": "user#1"}, "sk": {"N": "42"}}'
item='{
  "pk": {"S": "user#1"},
  "sk": {"N": "42"},
  "name": {"S": "Ada 雲"},
  "score": {"N": "-3.14"},
  "big": {"N": "12345678901234567890123456789012345678"},
  "blob": {"B": "AAEC/w=="},
  "active": {"BOOL": true},
  "nothing": {"NULL": true},
  "tags": {"SS": ["b", "a"]},
  "nums": {"NS": ["1", "2.5"]},
  "nested": {"M": {"list": {"L": [{"N": "1"}, {"S": "x"}, {"BOOL": false}]}}}
}'

ddb create-table --table-name "$table" \
  --attribute-definitions AttributeName=pk,AttributeType=S AttributeName=sk,AttributeType=N \
  --key-schema AttributeName=pk,KeyType=HASH AttributeName=sk,KeyType=RANGE \
  --billing-mode PAY_PER_REQUEST \
  --stream-specification StreamEnabled=true,StreamViewType=NEW_AND_OLD_IMAGES
check "create-table returns the table description" \
  "r['TableDescription']['TableName'] == '$table' and r['TableDescription']['TableStatus'] in ('CREATING', 'ACTIVE') and sorted((k['AttributeName'], k['KeyType']) for k in r['TableDescription']['KeySchema']) == [('pk', 'HASH'), ('sk', 'RANGE')]"

ddb describe-table --table-name "$table"
check "describe-table shows the table ACTIVE" \
  "r['Table']['TableName'] == '$table' and r['Table']['TableStatus'] == 'ACTIVE'"

ddb list-tables
check "list-tables lists the table" "'$table' in r['TableNames']"

ddb put-item --table-name "$table" --item "$item"
check "put-item returns no attributes" "'Attributes' not in r"

ddb get-item --table-name "$table" --key "$key" --consistent-read
# Sets have no order, so their members are compared sorted.
check "get-item returns the item exactly" "
(lambda norm: norm(r.get('Item')) == norm(e))(
  lambda item: item and {k: ({t: sorted(v) for t, v in av.items()} if set(av) & {'SS', 'NS', 'BS'} else av)
                         for k, av in item.items()})" "$item"

ddb delete-item --table-name "$table" --key "$key"
check "delete-item returns no attributes" "'Attributes' not in r"

ddb get-item --table-name "$table" --key "$key" --consistent-read
check "get-item after delete-item returns no item" "'Item' not in r"

ddb update-time-to-live --table-name "$table" \
  --time-to-live-specification Enabled=true,AttributeName=expires
check "update-time-to-live echoes the specification" \
  "r == {'TimeToLiveSpecification': {'Enabled': True, 'AttributeName': 'expires'}}"

ddb describe-time-to-live --table-name "$table"
check "describe-time-to-live shows TTL enabled" \
  "r == {'TimeToLiveDescription': {'TimeToLiveStatus': 'ENABLED', 'AttributeName': 'expires'}}"

streams list-streams --table-name "$table"
check "list-streams lists the table's stream" \
  "len(r['Streams']) == 1 and r['Streams'][0]['TableName'] == '$table'"
stream_arn=$(json "r['Streams'][0]['StreamArn']")

streams describe-stream --stream-arn "$stream_arn"
check "describe-stream shows one open shard" \
  "r['StreamDescription']['StreamStatus'] == 'ENABLED' and len(r['StreamDescription']['Shards']) == 1 and 'EndingSequenceNumber' not in r['StreamDescription']['Shards'][0]['SequenceNumberRange']"
shard_id=$(json "r['StreamDescription']['Shards'][0]['ShardId']")

streams get-shard-iterator --stream-arn "$stream_arn" --shard-id "$shard_id" \
  --shard-iterator-type TRIM_HORIZON
iterator=$(json "r['ShardIterator']")

streams get-records --shard-iterator "$iterator"
check "get-records returns the INSERT and the REMOVE with their images" "(
[x['eventName'] for x in r['Records']] == ['INSERT', 'REMOVE']
and r['Records'][0]['dynamodb']['NewImage']['name'] == {'S': 'Ada 雲'}
and r['Records'][1]['dynamodb']['OldImage']['big'] == {'N': '12345678901234567890123456789012345678'}
and r['Records'][1]['dynamodb']['Keys'] == {'pk': {'S': 'user#1'}, 'sk': {'N': '42'}}
and int(r['Records'][0]['dynamodb']['SequenceNumber']) < int(r['Records'][1]['dynamodb']['SequenceNumber']))"

# PartiQL. The JSON lists name the table unquoted, which DynamoDB accepts for a plain name.
ddb execute-statement \
  --statement "INSERT INTO \"$table\" VALUE {'pk': ?, 'sk': ?, 'label': ?}" \
  --parameters '[{"S": "pq#1"}, {"N": "7"}, {"S": "Ada"}]'
check "execute-statement INSERT returns no items" "r == {'Items': []}"

ddb execute-statement --statement "SELECT * FROM \"$table\" WHERE pk = ? AND sk = ?" \
  --parameters '[{"S": "pq#1"}, {"N": "7"}]'
check "execute-statement SELECT returns the inserted item" "r == {'Items': [e]}" \
  '{"pk": {"S": "pq#1"}, "sk": {"N": "7"}, "label": {"S": "Ada"}}'

cat >"$work/transaction.json" <<JSON
[{"Statement": "UPDATE $table SET label = ? WHERE pk = ? AND sk = ?",
  "Parameters": [{"S": "Grace"}, {"S": "pq#1"}, {"N": "7"}]},
 {"Statement": "INSERT INTO $table VALUE {'pk': ?, 'sk': ?}",
  "Parameters": [{"S": "pq#2"}, {"N": "8"}]}]
JSON
ddb execute-transaction --transact-statements "file://$work/transaction.json"
check "execute-transaction of writes returns empty Responses" "r == {'Responses': []}"

cat >"$work/batch.json" <<JSON
[{"Statement": "SELECT label FROM $table WHERE pk = ? AND sk = ?",
  "Parameters": [{"S": "pq#1"}, {"N": "7"}]},
 {"Statement": "SELECT * FROM $table WHERE pk = ? AND sk = ?",
  "Parameters": [{"S": "pq#2"}, {"N": "8"}]},
 {"Statement": "SELECT * FROM $table WHERE pk = ? AND sk = ?",
  "Parameters": [{"S": "pq#3"}, {"N": "9"}]}]
JSON
ddb batch-execute-statement --statements "file://$work/batch.json"
check "batch-execute-statement reads the transaction's writes" "r == {'Responses': [
  {'TableName': '$table', 'Item': {'label': {'S': 'Grace'}}},
  {'TableName': '$table', 'Item': {'pk': {'S': 'pq#2'}, 'sk': {'N': '8'}}},
  {'TableName': '$table'}]}"

ddb delete-table --table-name "$table"
check "delete-table returns the table description" \
  "r['TableDescription']['TableName'] == '$table'"

ddb list-tables
check "list-tables no longer lists the table" "'$table' not in r['TableNames']"

if "$aws_cli" dynamodb describe-table --endpoint-url "$endpoint" --table-name "$table" \
    >"$work/out.json" 2>"$work/err.txt"; then
  fail "describe-table of a deleted table succeeded"
fi
grep -q ResourceNotFoundException "$work/err.txt" || {
  cat "$work/err.txt" >&2
  fail "describe-table of a deleted table did not answer ResourceNotFoundException"
}
echo "ok: describe-table of a deleted table answers ResourceNotFoundException"

stop_server
echo "cli smoke: all checks passed"
