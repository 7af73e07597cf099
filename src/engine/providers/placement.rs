//! Where ONNX Runtime placed a session's nodes: how many each execution provider was assigned, and
//! which operators the CPU got. ONNX Runtime puts nodes a provider cannot run on the CPU without a
//! word, so "CUDA:0 in use" alone does not say the model runs on the GPU.
//!
//! A session built with the config entry `session.record_ep_graph_assignment_info` = 1 keeps its
//! assignment, which `Session_GetEpGraphAssignmentInfo` (ONNX Runtime's C API since level 24) lists
//! as subgraphs per provider with their nodes; the lists belong to the session.
//!
//! segrt compiles ort at API level 21 (see Cargo.toml), whose `OrtApi` struct ends before these
//! functions, so they are read from ONNX Runtime's function table by slot number. The table only
//! ever grows at its end (ONNX Runtime checks each release's slots with static_asserts), and segrt
//! loads only ONNX Runtime 1.24 and later (`runtime::release`: level 24 added these slots, 407-412),
//! whose tables hold them.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr};

use ort::session::Session;
use ort::sys::{OrtApi, OrtEpAssignedNode, OrtEpAssignedSubgraph, OrtSession, OrtStatusPtr};
use ort::AsPointer;
use serde::Serialize;

/// Slots in `OrtApi`: the fields before them in ort-sys 2.0.0-rc.15's `OrtApi` with every level on,
/// `CreateSession` and `CreateSessionFromArray` counted once (ort-sys declares each twice, the second
/// for WebAssembly). Checked against ONNX Runtime 1.31.1: the slot before `CreateEnvWithOptions` (405)
/// answers as `GetCompatibilityInfoFromModelBytes`, and ONNX Runtime static_asserts
/// `SetEpDynamicOptions` in slot 284, which every call here compares with ort's level-21 struct.
const SLOT_SET_EP_DYNAMIC_OPTIONS: usize = 284;
const SLOT_SESSION_GET_EP_GRAPH_ASSIGNMENT_INFO: usize = 407;
const SLOT_EP_ASSIGNED_SUBGRAPH_GET_EP_NAME: usize = 408;
const SLOT_EP_ASSIGNED_SUBGRAPH_GET_NODES: usize = 409;
const SLOT_EP_ASSIGNED_NODE_GET_OPERATOR_TYPE: usize = 412;
// The level-21 struct ends before them: a later ort level with the fields would make this obsolete.
const _: () = assert!(size_of::<OrtApi>() / size_of::<usize>() <= SLOT_SESSION_GET_EP_GRAPH_ASSIGNMENT_INFO);

type GetAssignmentInfo = unsafe extern "system" fn(*const OrtSession, *mut *const *const OrtEpAssignedSubgraph, *mut usize) -> OrtStatusPtr;
type GetEpName = unsafe extern "system" fn(*const OrtEpAssignedSubgraph, *mut *const c_char) -> OrtStatusPtr;
type GetNodes = unsafe extern "system" fn(*const OrtEpAssignedSubgraph, *mut *const *const OrtEpAssignedNode, *mut usize) -> OrtStatusPtr;
type GetOperatorType = unsafe extern "system" fn(*const OrtEpAssignedNode, *mut *const c_char) -> OrtStatusPtr;

/// The function pointer in slot `index` of ONNX Runtime's `OrtApi` table.
///
/// # Safety
/// `F` must be the slot's function type, and the loaded ONNX Runtime's table must have the slot.
unsafe fn slot<F: Copy>(index: usize) -> F {
    const { assert!(size_of::<F>() == size_of::<*const c_void>()) };
    let table = std::ptr::from_ref(ort::api()).cast::<*const c_void>();
    // SAFETY: the caller guarantees the slot exists and holds a function of type `F` (a pointer).
    unsafe { std::mem::transmute_copy(&*table.add(index)) }
}

/// The session config entry that makes ONNX Runtime record the assignment.
pub const RECORD_CONFIG_KEY: &str = "session.record_ep_graph_assignment_info";

/// ONNX Runtime's name of its CPU provider.
pub const CPU_PROVIDER: &str = "CPUExecutionProvider";

/// Nodes one execution provider was assigned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeCount {
    /// ONNX Runtime's name, e.g. "CUDAExecutionProvider".
    pub provider: String,
    /// Nodes as ONNX Runtime partitioned the graph among the providers: after its basic graph
    /// optimisations, before the fusions each provider makes in its part.
    pub nodes: u64,
    /// How many of them each operator type accounts for ("Conv": 12, "Shape": 3, ...).
    pub operators: BTreeMap<String, u64>,
}

/// The nodes per provider of `session`, in ONNX Runtime's order (the providers in the order they
/// were registered, the CPU last). An error when the session did not record them.
pub fn of_session(session: &Session) -> Result<Vec<NodeCount>, String> {
    // SAFETY: a slot of every ONNX Runtime's table, read as a plain pointer.
    let known: *const c_void = unsafe { slot(SLOT_SET_EP_DYNAMIC_OPTIONS) };
    if known != ort::api().SetEpDynamicOptions as *const c_void {
        return Err("ONNX Runtime's function table is not laid out as segrt expects".into());
    }
    // SAFETY: the slots and types of ONNX Runtime 1.31's table (above), the only release segrt loads.
    let (get_info, get_ep_name, get_nodes, get_operator_type) = unsafe {
        (
            slot::<GetAssignmentInfo>(SLOT_SESSION_GET_EP_GRAPH_ASSIGNMENT_INFO),
            slot::<GetEpName>(SLOT_EP_ASSIGNED_SUBGRAPH_GET_EP_NAME),
            slot::<GetNodes>(SLOT_EP_ASSIGNED_SUBGRAPH_GET_NODES),
            slot::<GetOperatorType>(SLOT_EP_ASSIGNED_NODE_GET_OPERATOR_TYPE),
        )
    };
    let mut subgraphs: *const *const OrtEpAssignedSubgraph = std::ptr::null();
    let mut count = 0usize;
    // SAFETY: a live session; the list it fills belongs to the session, which outlives this function.
    check(unsafe { get_info(session.ptr(), &mut subgraphs, &mut count) })?;
    if count > 0 && subgraphs.is_null() {
        return Err("ONNX Runtime returned no list of subgraphs".into());
    }
    let mut list: Vec<NodeCount> = Vec::new();
    for i in 0..count {
        // SAFETY: `count` entries were filled above.
        let subgraph = unsafe { *subgraphs.add(i) };
        if subgraph.is_null() {
            continue;
        }
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: a subgraph of the list above; the name belongs to it.
        check(unsafe { get_ep_name(subgraph, &mut name) })?;
        let provider = text(name);
        let mut nodes: *const *const OrtEpAssignedNode = std::ptr::null();
        let mut n = 0usize;
        // SAFETY: as above.
        check(unsafe { get_nodes(subgraph, &mut nodes, &mut n) })?;
        if n > 0 && nodes.is_null() {
            return Err("ONNX Runtime returned no list of nodes".into());
        }
        let index = match list.iter().position(|c| c.provider == provider) {
            Some(i) => i,
            None => {
                list.push(NodeCount { provider, nodes: 0, operators: BTreeMap::new() });
                list.len() - 1
            }
        };
        let entry = &mut list[index];
        for j in 0..n {
            // SAFETY: `n` nodes were filled above.
            let node = unsafe { *nodes.add(j) };
            let mut op: *const c_char = std::ptr::null();
            // SAFETY: a node of the subgraph above; the string belongs to it.
            check(unsafe { get_operator_type(node, &mut op) })?;
            entry.nodes += 1;
            *entry.operators.entry(text(op)).or_default() += 1;
        }
    }
    Ok(list)
}

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string ONNX Runtime returned, alive while the session is.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn check(status: OrtStatusPtr) -> Result<(), String> {
    if status.0.is_null() {
        return Ok(());
    }
    let api = ort::api();
    // SAFETY: a non-null status from ONNX Runtime, read once and released here.
    let message = unsafe { CStr::from_ptr((api.GetErrorMessage)(status.0)) }.to_string_lossy().into_owned();
    // SAFETY: released once, after its message was copied.
    unsafe { (api.ReleaseStatus)(status.0) };
    Err(message)
}

/// Nodes on ONNX Runtime's CPU provider.
pub fn cpu_nodes(placement: &[NodeCount]) -> u64 {
    placement.iter().filter(|c| c.provider == CPU_PROVIDER).map(|c| c.nodes).sum()
}

/// All nodes.
pub fn total_nodes(placement: &[NodeCount]) -> u64 {
    placement.iter().map(|c| c.nodes).sum()
}

/// The operators on the CPU, most nodes first: "Shape 4, Gather 2".
pub fn cpu_operators(placement: &[NodeCount]) -> String {
    let mut ops: Vec<(&String, &u64)> = placement.iter().filter(|c| c.provider == CPU_PROVIDER).flat_map(|c| &c.operators).collect();
    ops.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    ops.iter().map(|(op, n)| format!("{op} {n}")).collect::<Vec<_>>().join(", ")
}

/// One line for people: "CUDAExecutionProvider 340, CPUExecutionProvider 12 (Shape 8, Gather 4)".
pub fn describe(placement: &[NodeCount]) -> String {
    placement
        .iter()
        .map(|c| {
            if c.provider == CPU_PROVIDER && placement.len() > 1 {
                format!("{} {} ({})", c.provider, c.nodes, cpu_operators(placement))
            } else {
                format!("{} {}", c.provider, c.nodes)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(provider: &str, ops: &[(&str, u64)]) -> NodeCount {
        let operators: BTreeMap<String, u64> = ops.iter().map(|(o, n)| (o.to_string(), *n)).collect();
        NodeCount { provider: provider.into(), nodes: operators.values().sum(), operators }
    }

    #[test]
    fn counts_and_the_cpu_s_operators_are_summed_and_described() {
        let placement =
            [count("CUDAExecutionProvider", &[("Conv", 300), ("Relu", 40)]), count(CPU_PROVIDER, &[("Gather", 4), ("Shape", 8)])];
        assert_eq!((cpu_nodes(&placement), total_nodes(&placement)), (12, 352));
        assert_eq!(cpu_operators(&placement), "Shape 8, Gather 4");
        assert_eq!(describe(&placement), "CUDAExecutionProvider 340, CPUExecutionProvider 12 (Shape 8, Gather 4)");
        let cpu_only = [count(CPU_PROVIDER, &[("Conv", 20)])];
        assert_eq!(describe(&cpu_only), "CPUExecutionProvider 20");
    }
}
