:PREROUTING
*mangle
-m cluster --cluster-total-nodes 2 --cluster-local-node 1 --cluster-hash-seed 0xdeadbeef;-m cluster --cluster-local-nodemask 0x00000001 --cluster-total-nodes 2 --cluster-hash-seed 0xdeadbeef;OK
-m cluster --cluster-total-nodes 4 ! --cluster-local-nodemask 6 --cluster-hash-seed 1;-m cluster ! --cluster-local-nodemask 0x00000006 --cluster-total-nodes 4 --cluster-hash-seed 0x00000001;OK
-m cluster --cluster-total-nodes 2 --cluster-local-node 3 --cluster-hash-seed 1;;FAIL
-m cluster --cluster-total-nodes 2 --cluster-hash-seed 1;;FAIL
-m cluster --cluster-local-node 1 --cluster-hash-seed 1;;FAIL
