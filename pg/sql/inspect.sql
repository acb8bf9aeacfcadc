-- idmint_inspect: the members `idmint inspect --json` prints.
SELECT idmint_inspect('017F22E2-79B0-7CC3-98C4-DC0C0C07398F');
SELECT idmint_inspect('C232AB00-9414-11EC-B3C8-9F6BDECED846');
SELECT idmint_inspect('{919108f7-52d1-4320-9bac-f847db4148a8}');
SELECT idmint_inspect('01ARZ3NDEKTSV4RRFFQ69G5FAV');
SELECT idmint_inspect('prefix_01h455vb4pex5vsknk084sn02q');
SELECT idmint_inspect('0ujtsYcgvSTl8PAuAdqWYSMnLOv');
SELECT idmint_inspect('175928847299117063', 'discord');
SELECT idmint_inspect('1541815603606036480');
SELECT idmint_inspect('4194304', 'time=41,node=10,seq=12,unit=1ms,epoch=1735689600000');
-- Members are usable as jsonb.
SELECT idmint_inspect(uuid_to_typeid('user', '01890a5d-ac96-774b-bcce-b302099a8057'))->>'prefix' AS prefix,
       idmint_inspect(uuidv7()::text)->>'kind' AS kind,
       (idmint_inspect(snowflake()::text)->'sequence') IS NOT NULL AS has_sequence;
SELECT idmint_inspect(NULL) IS NULL AS strict;
