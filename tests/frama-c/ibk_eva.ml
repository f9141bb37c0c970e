(* SPDX-License-Identifier: MIT *)
(* ibk_eva.ml - loaded into frama-c after EVA (tests/frama-c/run): for
   each function of the headers EVA analysed (ib_keys.h, ib_tables.h; not
   a harness's, whose names repeat across harnesses), one line "function
   NAME REACHED TOTAL" over its statements, one "unreached NAME FILE:LINE
   ID" per statement EVA never reached (ID: a hash of the statement's
   text, which tells apart the statements of one line across runs), and
   one "alarm NAME FILE:LINE KIND" per alarm it emitted.
   Blocks are containers, not statements: EVA keeps no state for a block,
   only for what it holds, and C's "case X: return" becomes a block (the
   return's assignment and goto) that EVA would report as never reached
   even where it ran. *)
let counted s =
  match s.Cil_types.skind with
  | Cil_types.Block _ | Cil_types.UnspecifiedSequence _ -> false
  | _ -> true

let file (p, _) =
  Filename.basename (Filepath.Normalized.to_pretty_string p.Filepath.pos_path)

let location s =
  let loc = Cil_datatype.Stmt.loc s in
  Printf.sprintf "%s:%d" (file loc) (fst loc).Filepath.pos_lnum

let in_headers kf =
  List.mem (file (Kernel_function.get_location kf))
    ["ib_keys.h"; "ib_tables.h"]

let report kf =
  let fd = Kernel_function.get_definition kf in
  let name = Kernel_function.get_name kf in
  let stmts = List.filter counted fd.Cil_types.sallstmts in
  let unreached =
    List.filter (fun s -> not (Db.Value.is_reachable_stmt s)) stmts in
  Format.printf "function %s %d %d@." name
    (List.length stmts - List.length unreached) (List.length stmts);
  List.iter (fun s -> Format.printf "unreached %s %s %x@." name (location s)
                (Hashtbl.hash (Format.asprintf "%a" Printer.pp_stmt s)))
    unreached

let () =
  Db.Main.extend (fun () ->
      if Db.Value.is_computed () then begin
        Globals.Functions.iter (fun kf ->
            if Kernel_function.is_definition kf && !Db.Value.is_called kf
               && in_headers kf
            then report kf);
        Alarms.iter (fun _ kf s ~rank:_ alarm _ ->
            Format.printf "alarm %s %s %s@." (Kernel_function.get_name kf)
              (location s) (Alarms.get_name alarm))
      end)
