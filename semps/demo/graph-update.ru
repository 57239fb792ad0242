# The knowledge graph learns of a new head of department (POST /graph): a change notifies too.
PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
INSERT DATA {
  <http://www.Department9.University3.edu> a ub:Department .
  <http://www.Department9.University3.edu/FullProfessor1> a ub:FullProfessor ;
      ub:name "Barbara Liskov" ;
      ub:headOf <http://www.Department9.University3.edu> .
}
