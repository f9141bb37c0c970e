(* SPDX-License-Identifier: MIT *)
(* wp_strategies.ml - two automatic proof strategies for WP's -wp-auto,
   loaded with -load-script by the runs of wp_rules.c. Both only choose
   where to apply a case split; each case is then proven by Qed or an SMT
   prover like any goal, so neither can prove what does not hold.

   ibk:overflow applies WP's own Overflow tactic (Wp.overflow) to a
   machine-integer conversion, to_uint64(x) and the like: the cases x in
   range (the conversion is x), below and above (x modulo 2^n). The
   provers get no definition of the conversions otherwise: with it, a sum
   that carries out of 64 bits is x - 2^64 (wp_rules.c's wrap64).

   ibk:split-if splits on the condition c of an integer if-then-else term
   (Qed's form of a C comparison used as a value, e.g. the failure bits of
   ibk_mem_range_check()): under c the term is replaced by its then branch,
   under !c by its else branch. Qed then folds the constants. *)
open Wp

let replace e v =
  Conditions.subst (fun u -> if u == e then v else raise Not_found)

let is_if e =
  match Lang.F.repr e with
  | Qed.Logic.If _ -> Lang.F.is_int e && Lang.F.lc_closed e
  | _ -> false

class split_if =
  object
    inherit
      Tactical.make ~id:"Ibk.split_if" ~title:"Split If"
        ~descr:"Case on the condition of an if-then-else term" ~params:[]

    method select _ selection =
      let e = Tactical.selected selection in
      match Lang.F.repr e with
      | Qed.Logic.If (c, a, b) when is_if e ->
          let c = Lang.F.p_bool c in
          Tactical.Applicable
            (fun (hs, g) ->
              [ ("Then", replace e a (hs, Lang.F.p_imply c g));
                ("Else", replace e b (hs, Lang.F.p_imply (Lang.F.p_not c) g))
              ])
      | _ -> Tactical.Not_applicable
  end

(* The unsigned conversion a mask 2^n - 1 stands for. *)
let mask_type e =
  match Lang.F.repr e with
  | Qed.Logic.Kint z ->
      List.find_opt
        (fun (_, bits) ->
          Integer.equal z (Integer.pred (Integer.two_power_of_int bits)))
        Ctypes.[ (UInt8, 8); (UInt16, 16); (UInt32, 32); (UInt64, 64) ]
      |> Option.map fst
  | _ -> None

let masked e =
  match Lang.F.repr e with
  | Qed.Logic.Fun (f, [ a; b ]) when f == Cint.f_land -> (
      match (mask_type a, mask_type b) with
      | Some t, _ -> Some (t, b)
      | _, Some t -> Some (t, a)
      | _ -> None)
  | _ -> None

class mask =
  object
    inherit
      Tactical.make ~id:"Ibk.mask" ~title:"Mask"
        ~descr:"x & (2^n - 1) is x's unsigned conversion to n bits" ~params:[]

    method select _ selection =
      let e = Tactical.selected selection in
      match masked e with
      | Some (t, x) ->
          Tactical.Applicable
            (Auto.t_replace ~equal:"Mask" ~src:e ~tgt:(Cint.convert t x)
               Auto.t_id)
      | None -> Tactical.Not_applicable
  end

let split_if = lazy (Tactical.export (new split_if))
let mask = lazy (Tactical.export (new mask))
let overflow = lazy (Tactical.lookup ~id:"Wp.overflow")

let is_conversion e =
  match Lang.F.repr e with
  | Qed.Logic.Fun (f, [ _ ]) -> (
      try
        ignore (Cint.to_cint f);
        true
      with Not_found -> false)
  | _ -> false

(* Offers [tactical] on each sub-term of the goal and of the hypotheses
   that [pick] accepts, the goal's first. *)
let search pick tactical push ((hs, goal) : Conditions.sequent) =
  let seen = Hashtbl.create 16 in
  let rec walk clause priority e =
    if not (Hashtbl.mem seen e) then begin
      Hashtbl.add seen e ();
      if pick e then
        push
          (Strategy.make (Lazy.force tactical) ~priority
             (Tactical.Inside (clause, e)));
      Lang.F.lc_iter (walk clause priority) e
    end
  in
  walk (Tactical.Goal goal) 1.0 (Lang.F.e_prop goal);
  Conditions.iter
    (fun step ->
      walk (Tactical.Step step) 0.5 (Lang.F.e_prop (Conditions.head step)))
    hs

class heuristic id title descr pick tactical =
  object
    method id : string = id
    method title : string = title
    method descr : string = descr
    method search push seq = search pick tactical push seq
  end

let () =
  Strategy.register
    (new heuristic "ibk:overflow" "Auto Overflow"
       "Wp.overflow on machine-integer conversions" is_conversion overflow);
  Strategy.register
    (new heuristic "ibk:split-if" "Auto Split If"
       "Cases on the condition of integer if-then-else terms" is_if split_if);
  Strategy.register
    (new heuristic "ibk:mask" "Auto Mask"
       "x & (2^n - 1) as x's unsigned conversion"
       (fun e -> masked e <> None)
       mask)
